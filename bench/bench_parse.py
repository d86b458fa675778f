"""Parsing time over a corpus: `parse_org` on every file's text, read beforehand, CPU time.

    python bench/bench_parse.py [--corpus ../shared/corpora/braindump] [--runs 5]

Prints the best of the runs, so two checkouts can be compared by alternating
`PYTHONPATH=OLD_CHECKOUT python bench/bench_parse.py` with `PYTHONPATH=. ...`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from orgkit.org import parse_org

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parents[1] / "shared" / "corpora" / "braindump")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    files = [(str(p), p.read_text(errors="replace")) for p in sorted(args.corpus.rglob("*.org"))]
    best = float("inf")
    for _ in range(args.runs):
        start = time.process_time()
        for path, text in files:
            parse_org(text, path)
        best = min(best, time.process_time() - start)
    print(f"{len(files)} files: {best * 1000:.0f} ms CPU (best of {args.runs})")


if __name__ == "__main__":
    main()

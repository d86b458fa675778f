"""One changed file in an indexed corpus: what `orgkit index` costs, wall and CPU.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_one_change.py --notes bench/out/graph-corpus [--runs 5] [--source DIR]

The corpus must be indexed with embeddings already. Each round appends a line
to one file and runs `orgkit index --json --quiet` as a fresh process (start-up,
the check of every file, re-reading the changed one, loading the model and
embedding its changed passage included), then the same with `--no-embed`.
Medians over the rounds; CPU is user + system time, the fairer figure on a
shared machine; the load average is taken before and after. `--source DIR`
runs the orgkit package found in DIR instead of the installed one (an older
checkout, for a before/after comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path


def orgkit_command(source: Path | None) -> list[str]:
    """`orgkit` as a fresh process: the installed package, or the one in `source`."""
    if source is None:
        return [sys.executable, "-c", "from orgkit.cli import main; main()"]
    # An editable install's finder would answer before sys.path: drop it, then look in `source` first.
    return [sys.executable, "-c",
            "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
            f"sys.path.insert(0, {str(source.resolve())!r}); from orgkit.cli import main; main()"]


def timed(orgkit: list[str], args: list[str]) -> tuple[float, float, dict]:
    started = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *orgkit, *args], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", proc.stderr).group(1)) for k in ("User", "System"))
    return wall, cpu, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--source", type=Path, default=None, help="a directory holding the orgkit package to run")
    args = parser.parse_args()
    orgkit = orgkit_command(args.source)
    target = sorted(args.notes.rglob("*.org"))[len(list(args.notes.rglob("*.org"))) // 2]
    original = target.read_text(encoding="utf-8")
    results: dict = {"file": str(target.relative_to(args.notes)), "load_before": os.getloadavg()}
    try:
        for label, extra in (("embed", []), ("no_embed", ["--no-embed"])):
            walls, cpus = [], []
            for round_ in range(args.runs):
                time.sleep(2.1)  # past the window in which a just-written file is re-read by content
                target.write_text(original + f"\nA new thought, number {round_} ({label}).\n", encoding="utf-8")
                wall, cpu, stats = timed(orgkit, ["index", "--notes", str(args.notes), "--json", "--quiet", *extra])
                assert stats["parsed"] == 1, stats
                walls.append(wall)
                cpus.append(cpu)
            results[f"{label}_wall_s"] = statistics.median(walls)
            results[f"{label}_cpu_s"] = statistics.median(cpus)
            results[f"{label}_embedded"] = stats["embedded"]
    finally:
        target.write_text(original, encoding="utf-8")
    results["load_after"] = os.getloadavg()
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

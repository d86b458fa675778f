"""Benchmark the foundation: scan, read and nodes against raw ripgrep and parsing.

Builds a corpus of 10,000+ files by replicating braindump with fresh IDs (links
rewritten consistently, so every copy is a working org-roam directory), then
times each orgkit command beside the raw call it is built on.

    python bench/bench_graph.py [--copies 20] [--runs 5] [--out bench/out]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orgkit.rg import find_rg  # noqa: E402
from orgkit.vault import Vault  # noqa: E402
from corpus import BRAINDUMP, UUID_RE, replicate  # noqa: E402

def timed(cmd: list[str], runs: int) -> float:
    """Median wall time of a command, in seconds (output discarded)."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def hits(orgkit: list[str], query: str, corpus: Path) -> int:
    out = subprocess.run(orgkit + ["scan", *query.split(), "--json", "--notes", str(corpus)],
                         capture_output=True, text=True, check=True).stdout
    return len(json.loads(out))


def timed_call(func, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    args = parser.parse_args()

    corpus = args.out / "graph-corpus"
    n = replicate(BRAINDUMP, corpus, args.copies)
    orgkit = [str(Path(sys.executable).parent / "orgkit")]  # the console script, not a shell shim before it
    rg = find_rg()
    some_id = UUID_RE.search((corpus / "copy07" / "main" / "decision_tree_learning.org").read_text()).group(0)

    scans = [
        (f"`orgkit scan {query} --json` ({hits(orgkit, query, corpus)} hits)",
         timed(orgkit + ["scan", *query.split(), "--json", "--notes", str(corpus)], args.runs),
         timed([rg, "-i", "-n", "--no-heading", "-g", "*.org",
                rf"^(\*+ |#\+title:).*{query.split()[0]}", str(corpus)], args.runs))
        for query in ("bayesian inference", "zettelkasten", "learning")
    ]
    rows = [
        ("python start-up floor (`orgkit --version`)", timed(orgkit + ["--version"], args.runs), None),
        *scans,
        ("`orgkit read ID --json`",
         timed(orgkit + ["read", some_id, "--json", "--notes", str(corpus)], args.runs),
         timed([rg, "-l", f":ID: *{some_id}", str(corpus)], args.runs)),
        (f"`orgkit nodes --json` ({n} files)",
         timed(orgkit + ["nodes", "--json", "--notes", str(corpus)], max(1, args.runs // 2)),
         timed_call(lambda: Vault.load(corpus), max(1, args.runs // 2))),
        ("`orgkit nodes --json` (braindump, 529 files)",
         timed(orgkit + ["nodes", "--json", "--notes", str(BRAINDUMP)], args.runs),
         timed_call(lambda: Vault.load(BRAINDUMP), args.runs)),
    ]
    print(f"corpus: {n} files; median of {args.runs} runs; 2-core machine\n")
    print("| command | orgkit (s) | baseline (s) |")
    print("| --- | ---: | ---: |")
    for name, ours, base in rows:
        print(f"| {name} | {ours:.3f} | {'' if base is None else f'{base:.3f}'} |")
    print("\nbaselines: scan -> raw `rg -i` over headlines; read -> `rg -l ':ID: *<id>'`;"
          " nodes -> parsing the same files in-process (Vault.load)")


if __name__ == "__main__":
    main()

"""The sparse scan against raw ripgrep plus Python's start-up, as the scan target reads.

    python bench/bench_scan.py [--runs 21] [--corpus bench/out/graph-corpus] [QUERY ...]

For each query, runs `orgkit scan QUERY --json`, the raw `rg -i` over headlines
and titles that it is built on, and `orgkit --version` (the start-up floor) in
turn, `--runs` times, and prints the median wall time and CPU (the process and
its children) of each, and the scan's ratio to rg plus start-up. The console
script beside this interpreter is run, not a shell shim in front of it. The
corpus is braindump copied 20 times under fresh IDs (10,580 files), built on
first use as `bench_graph.py` builds it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orgkit.rg import find_rg  # noqa: E402
from corpus import BRAINDUMP, replicate  # noqa: E402


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `cmd` (output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries", nargs="*", default=["learning", "zettelkasten", "bayesian inference"])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--corpus", type=Path, default=REPO / "bench" / "out" / "graph-corpus")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        replicate(BRAINDUMP, args.corpus, 20)
    orgkit = str(Path(sys.executable).parent / "orgkit")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode cached
    print(f"corpus: {args.corpus}; median of {args.runs} alternating runs\n")
    print("| query | hits | scan wall (CPU) | raw rg wall (CPU) | start-up wall | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for query in args.queries:
        commands = {
            "scan": [orgkit, "scan", *query.split(), "--json", "--notes", str(args.corpus)],
            "rg": [find_rg(), "-i", "-n", "--no-heading", "-g", "*.org",
                   rf"^(\*+ |#\+title:).*{query.split()[0]}", str(args.corpus)],
            "start": [orgkit, "--version"],
        }
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                samples[name].append(run(cmd, env))
        wall = {name: statistics.median(s[0] for s in runs) for name, runs in samples.items()}
        cpu = {name: statistics.median(s[1] for s in runs) for name, runs in samples.items()}
        hits = subprocess.run(commands["scan"], capture_output=True, text=True, env=env).stdout.count('"line":')
        print(f"| `{query}` | {hits} | {wall['scan']:.3f} ({cpu['scan']:.3f}) | {wall['rg']:.3f} ({cpu['rg']:.3f})"
              f" | {wall['start']:.3f} | {wall['scan'] / (wall['rg'] + wall['start']):.2f}x |")


if __name__ == "__main__":
    main()

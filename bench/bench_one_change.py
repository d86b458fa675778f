"""One changed file in an indexed corpus: what `orgkit index` costs, wall and CPU.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_one_change.py --notes bench/out/graph-corpus [--runs 5]

The corpus must be indexed with embeddings already. Each round appends a line
to one file and runs `orgkit index --json --quiet` as a fresh process (start-up,
the check of every file, re-reading the changed one, loading the model and
embedding its changed passage included), then the same with `--no-embed`.
Medians over the rounds; CPU is user + system time, the fairer figure on a
shared machine.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]


def timed(args: list[str]) -> tuple[float, float, dict]:
    started = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *ORGKIT, *args], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", proc.stderr).group(1)) for k in ("User", "System"))
    return wall, cpu, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    target = sorted(args.notes.rglob("*.org"))[len(list(args.notes.rglob("*.org"))) // 2]
    original = target.read_text(encoding="utf-8")
    results: dict = {"file": str(target.relative_to(args.notes))}
    try:
        for label, extra in (("embed", []), ("no_embed", ["--no-embed"])):
            walls, cpus = [], []
            for round_ in range(args.runs):
                time.sleep(2.1)  # past the window in which a just-written file is re-read by content
                target.write_text(original + f"\nA new thought, number {round_} ({label}).\n", encoding="utf-8")
                wall, cpu, stats = timed(["index", "--notes", str(args.notes), "--json", "--quiet", *extra])
                assert stats["parsed"] == 1, stats
                walls.append(wall)
                cpus.append(cpu)
            results[f"{label}_wall_s"] = statistics.median(walls)
            results[f"{label}_cpu_s"] = statistics.median(cpus)
            results[f"{label}_embedded"] = stats["embedded"]
    finally:
        target.write_text(original, encoding="utf-8")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

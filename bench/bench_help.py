"""Whole-process time of `orgkit --help`, `orgkit COMMAND --help` and shell completion.

    python bench/bench_help.py [--runs N] [--tree DIR]

Each command runs N times (default 20) as a fresh process, `python -c "from
orgkit.cli import main; main()" ARGS` with PYTHONPATH=DIR (default: this
checkout), so the console script's launcher is left out; the bare
interpreter (`python -c pass`) is timed alike as the floor. Prints the
minimum and the median wall-clock time of each, and the median CPU time (user +
system, which a loaded machine disturbs far less), in seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from orgkit.cli import main; main(prog_name='orgkit')"]
CASES = {
    "python -c pass": ([sys.executable, "-c", "pass"], {}),
    "orgkit --help": ([*CLI, "--help"], {}),
    "orgkit search --help": ([*CLI, "search", "--help"], {}),
    "orgkit schema init --help": ([*CLI, "schema", "init", "--help"], {}),
    "completion of `orgkit s`": (CLI, {"_ORGKIT_COMPLETE": "bash_complete", "COMP_WORDS": "orgkit s",
                                       "COMP_CWORD": "1"}),
}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   cwd=tempfile.gettempdir())  # not the checkout: `-c` puts the working directory on sys.path
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    for name, (argv, extra) in CASES.items():
        env = dict(os.environ, PYTHONPATH=str(args.tree), **extra)
        walls, cpus = zip(*(timed(argv, env) for _ in range(args.runs)))
        print(f"{name:28} wall min {min(walls):.3f} s  median {statistics.median(walls):.3f} s  "
              f"cpu median {statistics.median(cpus):.3f} s")


if __name__ == "__main__":
    main()

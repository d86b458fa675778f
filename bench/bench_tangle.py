"""Tangling the literate corpus: orgkit (in-process and CLI) against Emacs, side by side.

    python bench/bench_tangle.py [--repeat N]

Each corpus file that tangles without evaluation is copied into fresh sandboxes
(as the differential tests do); the clock covers only the tangling.  Emacs runs
once per file (`emacs --batch -q` with the common Babel languages loaded), the
way a Makefile or pre-commit hook calls it; the orgkit CLI also runs once per
file; the in-process figure is `orgkit.tangle.tangle` on each file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from emacs_tangle import CORPUS, ELISP, NEEDS_EVALUATION, corpus_files, make_sandbox  # noqa: E402

from orgkit.tangle import tangle  # noqa: E402


def _sandboxes(base: Path, label: str) -> list:
    boxes = []
    for i, rel in enumerate(f for f in corpus_files() if f not in NEEDS_EVALUATION):
        top, inner = rel.split("/", 1)
        boxes.append(make_sandbox(base / f"{label}{i}", CORPUS / top, inner))
    return boxes


def _time_in_process(boxes: list) -> float:
    start = time.perf_counter()
    for box in boxes:
        os.environ["HOME"] = str(box.home)
        tangle([box.org])
    return time.perf_counter() - start


def _time_cli(boxes: list) -> float:
    orgkit = shutil.which("orgkit") or sys.exit("orgkit is not installed (pip install -e .)")
    start = time.perf_counter()
    for box in boxes:
        subprocess.run([orgkit, "tangle", str(box.org)], env=dict(os.environ, HOME=str(box.home)), check=True, capture_output=True)
    return time.perf_counter() - start


def _time_emacs(boxes: list, base: Path) -> float:
    start = time.perf_counter()
    for i, box in enumerate(boxes):
        jobs = base / f"jobs{i}.txt"
        jobs.write_text(f"{box.home}\t{box.org}\n")
        env = dict(os.environ, ORGKIT_TANGLE_JOBS=str(jobs), LANG="C.UTF-8", LC_ALL="C.UTF-8")
        proc = subprocess.run(["emacs", "--batch", "-q", "-l", str(ELISP)], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if not proc.stdout.startswith("OK"):
            sys.exit(f"Emacs failed on {box.org}: {proc.stdout}{proc.stderr[-500:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is reported")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"{CORPUS} is absent")
    if not shutil.which("emacs"):
        sys.exit("emacs is not installed")
    home = os.environ.get("HOME", "")
    best = {"in-process": float("inf"), "cli": float("inf"), "emacs": float("inf")}
    count = 0
    for run in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            boxes = _sandboxes(base, "p")
            count = len(boxes)
            best["in-process"] = min(best["in-process"], _time_in_process(boxes))
            os.environ["HOME"] = home
            best["cli"] = min(best["cli"], _time_cli(_sandboxes(base, "c")))
            best["emacs"] = min(best["emacs"], _time_emacs(_sandboxes(base, "e"), base))
    emacs = best["emacs"]
    print(f"{count} corpus files, best of {args.repeat} runs")
    print(f"{'tangler':<22}{'total s':>10}{'per file ms':>14}{'vs Emacs':>11}")
    for label, key in (("orgkit (in-process)", "in-process"), ("orgkit CLI, per file", "cli"), ("Emacs, per file", "emacs")):
        total = best[key]
        print(f"{label:<22}{total:>10.3f}{total / count * 1000:>14.1f}{emacs / total:>10.1f}x")


if __name__ == "__main__":
    main()

"""Differential-testing harness: tangle org files with Emacs and with orgkit, then compare.

Emacs runs once for a whole list of org files (each in its own sandbox with its
own HOME), which keeps the test suite fast.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from emacs_batch import batch_emacs

HERE = Path(__file__).resolve().parent
ELISP = HERE / "emacs_tangle.el"
SHARED = HERE.parents[1] / "shared"
CORPUS = SHARED / "corpora" / "literate"
CASES = HERE / "tangle_cases"

# Corpus files that need a block run while tangling (noweb calls `<<name(arg=...)>>`).
NEEDS_EVALUATION = {
    "thi-ng__geom/org/src/core/vector.org",
}


@dataclass
class Sandbox:
    """A copy of an org file's folder, with its own HOME, for one tangler run."""

    root: Path
    home: Path
    org: Path


def emacs_available() -> bool:
    """Whether batch Emacs can be run."""
    return shutil.which("emacs") is not None


def corpus_files() -> list[str]:
    """Org files of the literate corpus, relative to the corpus root."""
    return sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.org"))


def make_sandbox(base: Path, source_root: Path, org_rel: str) -> Sandbox:
    """Copy SOURCE_ROOT into BASE, create the directories of mkdirs.txt, make a HOME."""
    root = base / "repo"
    home = base / "home"
    shutil.copytree(source_root, root)
    home.mkdir()
    mkdirs = source_root / "mkdirs.txt"
    if mkdirs.exists():
        for line in mkdirs.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            target = home / line[2:] if line.startswith("~/") else root / line
            target.mkdir(parents=True, exist_ok=True)
    return Sandbox(root=root, home=home, org=root / org_rel)


def run_emacs(sandboxes: list[Sandbox], jobs_file: Path) -> dict[Path, str | None]:
    """Tangle every sandbox's org file in one Emacs; map org file to error text (None: ok)."""
    jobs_file.write_text("".join(f"{s.home}\t{s.org}\n" for s in sandboxes))
    env = dict(os.environ, ORGKIT_TANGLE_JOBS=str(jobs_file), LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        batch_emacs("-l", str(ELISP)),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    results: dict[Path, str | None] = {}
    for line in proc.stdout.splitlines():
        # A prompt Emacs prints before failing (no comment syntax) shares the line.
        start = max(line.find("OK\t"), line.find("ERR\t"), 0)
        parts = line[start:].split("\t")
        if parts[0] == "OK":
            results[Path(parts[1])] = None
        elif parts[0] == "ERR":
            results[Path(parts[1])] = parts[2] if len(parts) > 2 else "error"
    missing = [s.org for s in sandboxes if s.org not in results]
    if missing:
        raise RuntimeError(f"Emacs did not report on {missing}: {proc.stderr[-2000:]}")
    return results


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file under ROOT: relative name -> (bytes, permission bits)."""
    files: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            mode = stat.S_IMODE(path.stat().st_mode)
            files[str(path.relative_to(root))] = (path.read_bytes(), mode)
    return files


def differences(expected: dict[str, tuple[bytes, int]], actual: dict[str, tuple[bytes, int]]) -> list[str]:
    """Human-readable differences between two snapshots (names, bytes, modes)."""
    problems = []
    for name in sorted(set(expected) | set(actual)):
        if name not in actual:
            problems.append(f"{name}: written by Emacs only")
        elif name not in expected:
            problems.append(f"{name}: written by orgkit only")
        else:
            (edata, emode), (adata, amode) = expected[name], actual[name]
            if edata != adata:
                problems.append(f"{name}: bytes differ ({_first_difference(edata, adata)})")
            if emode != amode:
                problems.append(f"{name}: mode {amode:o}, Emacs {emode:o}")
    return problems


def _first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.split(b"\n"), b.split(b"\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: Emacs {x[:80]!r} orgkit {y[:80]!r}"
    return f"Emacs {len(la)} lines, orgkit {len(lb)} lines"

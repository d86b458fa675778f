"""Finding and running ripgrep.

The `rg` binary comes with the `ripgrep` wheel (installed beside the Python
interpreter's scripts); a `rg` on PATH is the fallback, and `$ORGKIT_RG` names
one explicitly. When there is none, callers use their pure-Python path.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .errors import OrgkitError
from .vault import is_org_file, iter_org_files, read_org_text


@lru_cache(maxsize=1)
def find_rg() -> str | None:
    """Path of the rg binary to use, or None when there is none."""
    explicit = os.environ.get("ORGKIT_RG")
    if explicit:
        return explicit if Path(explicit).is_file() or shutil.which(explicit) else None
    for scripts in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(scripts) / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


@dataclass
class RgResult:
    """Matches as (relative path, 1-based line, line text) and rg's complaints."""

    matches: list[tuple[str, int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def rg_org_lines(root: Path, patterns: list[str], *, ignore_case: bool = False) -> RgResult:
    """Lines of `*.org` files under `root` matching any of `patterns`.

    Hidden directories are searched (org-roam reads them too) except orgkit's
    state directory; .gitignore files are not honoured, for the same reason.
    """
    rg = find_rg()
    if rg is None:
        raise OrgkitError("ripgrep (rg) not found: pip install ripgrep, or put rg on PATH")
    args = [
        rg, "--no-config", "--null", "--line-number", "--no-heading", "--with-filename",
        "--color=never", "--hidden", "--no-ignore", "--follow",
        "-g", "*.org", "-g", "!.orgkit/", "-g", "!.git/",
    ]
    if ignore_case:
        args.append("--ignore-case")
    # Patterns go through stdin, one a line, so no query or ID list is too long for the
    # command line; one that holds a newline (which rg refuses) goes as an argument.
    piped = [p for p in patterns if "\n" not in p]
    for pattern in patterns:
        if "\n" in pattern:
            args += ["-e", pattern]
    if piped:
        args += ["-f", "-"]
    args.append("./")
    try:
        proc = subprocess.run(args, cwd=root, capture_output=True, check=False,
                              input="\n".join(piped).encode("utf-8", "surrogateescape") + b"\n" if piped else None)
    except OSError as exc:
        raise OrgkitError(f"ripgrep failed to start ({rg}): {exc}") from None
    result = RgResult()
    complaints = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    result.warnings.extend(f"ripgrep: {line}" for line in complaints)
    if proc.returncode not in (0, 1) and not complaints:
        result.warnings.append(f"ripgrep exited with status {proc.returncode}")
    for raw in proc.stdout.split(b"\n"):
        if not raw:
            continue
        name, _, rest = raw.partition(b"\0")
        number, _, text = rest.partition(b":")
        path = name.decode("utf-8", "surrogateescape")
        result.matches.append((path[2:] if path.startswith("./") else path, int(number),
                               text.decode("utf-8", "replace").rstrip("\r")))
    return result


def grep_org_lines(root: Path, patterns: list[str], *, ignore_case: bool = False) -> RgResult:
    """Lines of the notes' org files matching any of `patterns` (regexps both engines read).

    ripgrep does the work when there is one; without it a Python walk gives the
    same matches, slower, and says so once.
    """
    if find_rg() is not None:
        result = rg_org_lines(root, patterns, ignore_case=ignore_case)
    else:
        result = _python_org_lines(root, patterns, ignore_case)
    result.matches = [m for m in result.matches if is_org_file(m[0])]
    return result


def _python_org_lines(root: Path, patterns: list[str], ignore_case: bool) -> RgResult:
    result = RgResult(warnings=["ripgrep (rg) not found; searching with the slower built-in search"])
    compiled = [re.compile(p, re.I if ignore_case else 0) for p in patterns]
    for rel in iter_org_files(root):
        try:
            text = read_org_text(root, rel)
        except OrgkitError as exc:
            result.warnings.append(str(exc))
            continue
        for number, line in enumerate(text.split("\n"), 1):
            if any(c.search(line) for c in compiled):
                result.matches.append((rel, number, line))
    return result

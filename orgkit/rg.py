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
import threading
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Iterator

from .config import RG_VARIABLE
from .deadline import DeadlinePassed, remaining
from .errors import OrgkitError
from .patterns import linear
from .vault import follow_roots, is_org_file, iter_org_files, read_org_text, reachable


def environment() -> dict[str, str]:
    """The environment a child process gets: a copy taken now, handed to it whole.

    A child left to inherit the process's environment reads the C library's
    `environ` array after the fork, while another thread may be growing it
    (a library's import may call putenv: numpy's does when OPENBLAS_MAIN_FREE
    is unset): the array moves, and the child's exec fails with EFAULT ("Bad
    address"). A copy is built before the fork and no other thread touches it.
    """
    return dict(os.environ)


def find_rg() -> str | None:
    """Path of the rg binary to use, or None when there is none."""
    return _located(os.environ.get(RG_VARIABLE) or None)


@lru_cache(maxsize=4)
def _located(explicit: str | None) -> str | None:
    """Where rg is, for a value of the variable: looked up once per value (a pure function of it
    while the installation stays as it is), so a change of the variable is seen at once."""
    if explicit:
        return explicit if Path(explicit).is_file() or shutil.which(explicit) else None
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    import sysconfig  # only when rg is not beside the interpreter: loading it costs a scan 2 ms

    scripts = os.path.join(sysconfig.get_path("scripts"), "rg")
    if os.path.isfile(scripts) and os.access(scripts, os.X_OK):
        return scripts
    return shutil.which("rg")


Lines = list[tuple[int, str]]
"""Matching lines of one file: (1-based line number, line text)."""

# rg's `--null` record: a path (which may hold newlines but no NUL), its line number, the line.
_RECORD = re.compile(rb"([^\0]*)\0(\d+):([^\n]*)\n")


def _rg_args(rg: str, patterns: list[str], ignore_case: bool) -> tuple[list[str], list[str]]:
    """rg's arguments, and the patterns it reads from stdin (one a line).

    Hidden directories are searched (org-roam reads them too) except orgkit's
    state directory; .gitignore files are not honoured, for the same reason.
    Symlinks are followed only when the user's `notes.follow_roots` adds a root
    (and a hit outside every root is dropped then): a link out of the notes is
    never searched.
    Patterns go through stdin so no query or ID list is too long for the
    command line; one that holds a newline (which rg refuses there) goes as an
    argument.
    """
    args = [
        rg, "--no-config", "--null", "--line-number", "--no-heading", "--with-filename",
        "--color=never", "--hidden", "--no-ignore", *(["--follow"] if follow_roots() else []),
        "-g", "*.org", "-g", "!.orgkit/", "-g", "!.git/",
    ]
    if ignore_case:
        args.append("--ignore-case")
    piped = [p for p in patterns if "\n" not in p]
    for pattern in patterns:
        if "\n" in pattern:
            args += ["-e", pattern]
    if piped:
        args += ["-f", "-"]
    args.append("./")
    return args, piped


def rg_org_files(root: Path, patterns: list[str], warnings: list[str], *, ignore_case: bool = False,
                 caller_first: bool = False) -> Iterator[tuple[str, Lines]]:
    """Lines of `*.org` files under `root` matching any of `patterns`, a file at a time.

    Files come as ripgrep finishes them (in no set order), so a caller works on
    one while rg searches the rest; rg's complaints are added to `warnings` once
    it is done. A caller that stops early stops rg. One that works on each file
    as it comes puts itself `caller_first` (see `_lower_priority`).
    """
    rg = find_rg()
    if rg is None:
        raise OrgkitError("ripgrep (rg) not found: pip install ripgrep, or put rg on PATH")
    args, piped = _rg_args(rg, patterns, ignore_case)
    try:
        proc = subprocess.Popen(args, cwd=root, stdin=subprocess.PIPE if piped else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment())
    except OSError as exc:
        raise OrgkitError(f"ripgrep failed to start ({rg}): {exc}") from None
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None  # both are pipes
    errors: list[bytes] = []  # drained as rg writes them, so it never blocks on its complaints
    drain = threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True)
    drain.start()
    stopped = _stop_at_deadline(proc)
    done = False
    try:
        if caller_first and hasattr(os, "setpriority") and piped:  # piped: rg waits for its patterns
            _lower_priority(proc.pid)
        if piped and proc.stdin is not None:
            _feed(proc.stdin, "\n".join(piped).encode("utf-8", "surrogateescape") + b"\n")
        yield from _records(stdout)
        done = True
    finally:
        if not done:
            proc.kill()
        stdout.close()
        status = proc.wait()
        drain.join()
        stderr.close()
        if stopped is not None:
            stopped.cancel()
    if stopped is not None and stopped.killed.is_set():
        raise DeadlinePassed("ripgrep was stopped at the call's deadline (serve.call_timeout)")
    complaints = b"".join(errors).decode("utf-8", "replace").strip().splitlines()
    warnings.extend(f"ripgrep: {line}" for line in complaints)
    if status not in (0, 1) and not complaints:
        warnings.append(f"ripgrep exited with status {status}")


class _Stopper(threading.Timer):
    """A timer that kills rg, and says whether it did."""

    def __init__(self, seconds: float, proc: subprocess.Popen) -> None:
        self.killed = threading.Event()
        super().__init__(seconds, self._kill, args=(proc,))
        self.daemon = True

    def _kill(self, proc: subprocess.Popen) -> None:
        self.killed.set()
        proc.kill()


def _stop_at_deadline(proc: subprocess.Popen) -> _Stopper | None:
    """Kill rg when the call's deadline passes (a server's call; the command line has none)."""
    left = remaining()
    if left is None:
        return None
    stopper = _Stopper(left, proc)
    stopper.start()
    return stopper


_NICER = 5  # niceness above the caller's: rg's share against it is about a third


def _lower_priority(pid: int) -> None:
    """Lower rg's priority a little, before it starts its search threads (they inherit it).

    A caller that works on each file as it comes competes with rg's threads
    for the cores; at a lower priority rg lets it keep up, and still takes
    every core the caller leaves idle. On two cores a broad scan (2,620 hits)
    is a tenth faster so, and one with few hits is as fast as before; fewer
    rg threads would have slowed the latter.
    """
    try:
        os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, 0) + _NICER)
    except OSError:  # rg already gone, or a system that refuses: it only costs speed
        pass


def _feed(stdin: IO[bytes], data: bytes) -> None:
    """Hand rg its patterns; rg reads them all before it writes a line, so this cannot block on it."""
    try:
        stdin.write(data)
        stdin.close()
    except BrokenPipeError:  # rg stopped first (it says why on stderr)
        pass


def _records(stream: Any) -> Iterator[tuple[str, Lines]]:  # a buffered binary stream (read1)
    """rg's output read as it comes, grouped into runs of one file's lines."""
    parts: list[bytes] = []
    name: bytes | None = None
    lines: Lines = []
    while chunk := stream.read1(1 << 16):
        parts.append(chunk)
        if b"\n" not in chunk:  # no record ends here: keep a long line's pieces without rescanning them
            continue
        pending = b"".join(parts)
        pos = 0
        while m := _RECORD.match(pending, pos):
            pos = m.end()
            if m[1] != name:
                if name is not None and lines:
                    yield _relative(name), lines
                name, lines = m[1], []
            lines.append((int(m[2]), m[3].decode("utf-8", "replace").rstrip("\r")))
        parts = [pending[pos:]]
    if name is not None and lines:
        yield _relative(name), lines


def _relative(name: bytes) -> str:
    path = name.decode("utf-8", "surrogateescape")
    return path[2:] if path.startswith("./") else path


def org_files_matching(root: Path, patterns: list[str], warnings: list[str], *, ignore_case: bool = False,
                       caller_first: bool = False) -> Iterator[tuple[str, Lines]]:
    """Lines of the notes' org files matching any of `patterns` (regexps both engines read), by file.

    ripgrep does the work when there is one; without it a Python walk gives the
    same matches, slower, and says so once.
    """
    if find_rg() is not None:
        found = rg_org_files(root, patterns, warnings, ignore_case=ignore_case, caller_first=caller_first)
    else:
        found = _python_org_files(root, patterns, warnings, ignore_case)
    for rel, lines in found:
        if is_org_file(rel) and reachable(root, rel):
            yield rel, lines


def _python_org_files(root: Path, patterns: list[str], warnings: list[str],
                      ignore_case: bool) -> Iterator[tuple[str, Lines]]:
    warnings.append("ripgrep (rg) not found; searching with the slower built-in search")
    compiled = [linear(p, ignore_case=ignore_case) for p in patterns]  # a caller's pattern among them
    for rel in iter_org_files(root):
        try:
            text = read_org_text(root, rel)
        except OrgkitError as exc:
            warnings.append(str(exc))
            continue
        lines = [(number, line) for number, line in enumerate(text.split("\n"), 1)
                 if any(c.search(line) for c in compiled)]
        if lines:
            yield rel, lines

"""Append-only JSON-lines files that survive a crash at any moment.

Appends hold an exclusive `flock` on the file, write whole lines and fsync. A run
killed in the middle of a write can leave a last line without its newline; readers
ignore such a torn tail and the next append cuts it off before writing, so the file
is always a sequence of complete records.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..files import file_lock, made_dir


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record of `path` (none when it does not exist)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return list(_parse(data))


def _parse(data: bytes) -> Iterator[dict[str, Any]]:
    end = data.rfind(b"\n")
    for line in data[:end + 1].splitlines():
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line damaged outside orgkit: skip it, keep the rest
            if isinstance(record, dict):
                yield record


def append_records(path: Path, records: Iterable[dict[str, Any]],
                   unique: Callable[[dict[str, Any]], str] | None = None) -> list[dict]:
    """Append `records` under the file lock; returns those written.

    With `unique`, a record whose `unique(record)` is already in the file (or
    earlier in `records`) is left out; the check runs with the file locked, so
    two processes appending the same event write it once.
    """
    made_dir(path.parent)
    with file_lock(path, mode=0o644) as fd:
        if unique is not None:
            data = _read_all(fd)
            complete = data.rfind(b"\n") + 1
            seen = {unique(r) for r in _parse(data[:complete])}
        else:
            complete, seen = _complete_length(fd), set()
        if complete != os.fstat(fd).st_size:  # a torn tail from a killed run
            os.ftruncate(fd, complete)
        written: list[dict] = []
        for record in records:
            if unique is not None:
                key = unique(record)
                if key in seen:
                    continue
                seen.add(key)
            written.append(record)
        if written:
            payload = b"".join(json.dumps(r, ensure_ascii=False, sort_keys=True).encode() + b"\n"
                               for r in written)
            os.lseek(fd, complete, os.SEEK_SET)
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        return written


def _complete_length(fd: int) -> int:
    """The length of the file up to its last newline, read backwards from the end."""
    end = os.fstat(fd).st_size
    pos = end
    while pos > 0:
        step = min(1 << 16, pos)
        os.lseek(fd, pos - step, os.SEEK_SET)
        block = os.read(fd, step)
        cut = block.rfind(b"\n")
        if cut >= 0:
            return pos - step + cut + 1
        pos -= step
    return 0


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)

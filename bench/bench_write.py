"""What the note writer's one-ID-one-note check costs per write.

    python bench/bench_write.py --notes COPY-OF-NOTES [--writes 50]

Writes into the notes directory given (use a copy: it adds files), through the
one writer, in three ways: a new note with a fresh ID checked among the notes
(one ripgrep pass), the same unchecked (`ids=None`), and a new file that adds
no ID, checked (the check finds nothing to look up). Milliseconds per write,
wall time, with the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from pathlib import Path

from orgkit.org.write import atomic_write
from orgkit.locator import note_ids


def per_write(root: Path, writes: int, ids, with_id: bool) -> float:
    started = time.perf_counter()
    for i in range(writes):
        head = f":PROPERTIES:\n:ID: {uuid.uuid4()}\n:END:\n" if with_id else ""
        data = f"{head}#+title: Bench {i}\n\ntext\n".encode()
        atomic_write(root / f"bench-{uuid.uuid4().hex}.org", data, expected=None, ids=ids)
    return (time.perf_counter() - started) / writes * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--writes", type=int, default=50)
    args = parser.parse_args()
    root = args.notes
    print(f"load before: {os.getloadavg()[0]:.1f}")
    print(f"adds an ID, checked:   {per_write(root, args.writes, note_ids(root), True):6.1f} ms/write")
    print(f"adds an ID, unchecked: {per_write(root, args.writes, None, True):6.1f} ms/write")
    print(f"adds no ID, checked:   {per_write(root, args.writes, note_ids(root), False):6.1f} ms/write")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

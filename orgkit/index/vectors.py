"""All passage vectors of one model as one matrix, cached in a flat file.

SQLite holds the vectors (transactional, keyed by content); search wants them
as one float32 matrix. The cache file holds that matrix plus, per row, the
passage and node it belongs to, stamped with the index generation it was made
from; it is written to a temporary name and renamed, so a reader finds the
whole of an old cache or the whole of a new one, and a stale stamp sends it
back to SQLite (one query, one join of the blobs).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .store import Index

if TYPE_CHECKING:
    import numpy as np

_MAGIC = b"OKVEC001"
_HEADER = len(_MAGIC) + 3 * 8  # magic, generation, rows, dimensions


@dataclass
class VectorSet:
    """Row i of `matrix` is passage `chunks[i]` of node `nodes[i]` (row ids in the index)."""

    generation: int
    chunks: "np.ndarray"
    nodes: "np.ndarray"
    matrix: "np.ndarray"


def cache_path(index: Index, fingerprint: str) -> Path:
    return index.state_dir / f"vectors-{hashlib.sha1(fingerprint.encode()).hexdigest()[:12]}.bin"


def load_vectors(index: Index, fingerprint: str, conn: sqlite3.Connection) -> VectorSet:
    """The vectors as of `conn`'s snapshot: from the cache when it is current."""
    generation = index.generation(conn)
    cached = _read_cache(cache_path(index, fingerprint), generation)
    return cached if cached is not None else _from_database(conn, fingerprint, generation)


def refresh_cache(index: Index, fingerprint: str) -> None:
    """Rewrite the cache file if the index changed since it was written."""
    with index.snapshot() as conn:
        generation = index.generation(conn)
        path = cache_path(index, fingerprint)
        if _cache_generation(path) == generation:
            return
        vectors = _from_database(conn, fingerprint, generation)
    _write_cache(path, vectors)


def _from_database(conn: sqlite3.Connection, fingerprint: str, generation: int) -> VectorSet:
    import numpy as np

    rows = conn.execute(
        """SELECT c.rowid, c.node, v.vector FROM chunks c
           JOIN vectors v ON v.model = ? AND v.hash = c.hash ORDER BY c.rowid""",
        (fingerprint,),
    ).fetchall()
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return VectorSet(generation, empty, empty, np.zeros((0, 0), dtype=np.float32))
    chunks, nodes, blobs = zip(*rows)
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(rows), -1)
    return VectorSet(generation, np.array(chunks, dtype=np.int64), np.array(nodes, dtype=np.int64), matrix)


def _cache_generation(path: Path) -> int | None:
    """The generation a cache file was made from, reading only its header."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEADER)
    except OSError:
        return None
    if len(head) < _HEADER or not head.startswith(_MAGIC):
        return None
    return struct.unpack_from("=q", head, len(_MAGIC))[0]


def _read_cache(path: Path, generation: int) -> VectorSet | None:
    import numpy as np

    try:
        with path.open("rb") as handle:
            head = handle.read(_HEADER)
            if len(head) < _HEADER or not head.startswith(_MAGIC):
                return None
            stamp, rows, dims = struct.unpack_from("=qqq", head, len(_MAGIC))
            if stamp != generation:
                return None
            body = np.fromfile(handle, dtype=np.uint8)
    except OSError:
        return None
    ids_bytes = 2 * 8 * int(rows)
    if body.size != ids_bytes + 4 * int(rows) * int(dims):
        return None
    ids = body[:ids_bytes].view(np.int64)
    matrix = body[ids_bytes:].view(np.float32).reshape(int(rows), int(dims))
    return VectorSet(generation, ids[:rows], ids[rows:], matrix)


def _write_cache(path: Path, vectors: VectorSet) -> None:
    import numpy as np

    rows, dims = vectors.matrix.shape
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(_MAGIC)
            handle.write(struct.pack("=qqq", vectors.generation, rows, dims))
            handle.write(np.ascontiguousarray(vectors.chunks, dtype=np.int64).tobytes())
            handle.write(np.ascontiguousarray(vectors.nodes, dtype=np.int64).tobytes())
            handle.write(np.ascontiguousarray(vectors.matrix, dtype=np.float32).tobytes())
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)

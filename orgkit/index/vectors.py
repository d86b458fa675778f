"""All passage vectors of one model as one matrix, cached in a flat file.

SQLite holds the vectors (transactional, keyed by content); search wants them
as one float32 matrix. The cache file holds that matrix plus, per row, the
passage and node it belongs to and the hash of the passage's text, stamped
with the model and the index generation it was made from; it is written to a
temporary name and renamed, so a reader finds the whole of an old cache or the
whole of a new one, and a stale stamp sends it back to SQLite (one query, one
join of the blobs).

An update changes a few passages among tens of thousands, so the writer
patches the stale cache instead of reading every blob again: it lists the
passages that have a vector (row ids, nodes, text hashes: no blobs), copies
the vector of each passage that kept its row id and text from the old file,
and reads only the others' vectors. SQLite keys a vector by text and model, so
the same text under the same model is the same vector (one embedded again
after its vector was dropped may differ in the last bits, as the index already
accepts). Anything that does not fit (no cache, another model, another size,
rows out of order, a later generation) rebuilds from SQLite.
"""

from __future__ import annotations

import hashlib
import itertools
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..files import replace_file
from ..storage.db import Connection, write_transaction
from .store import Index, bump_generation
from .vector_store import VectorStore

if TYPE_CHECKING:
    import numpy as np

_MAGIC = b"OKVEC002"
_MODEL_BYTES = 24  # a digest of the model fingerprint: a cache copied from another model is refused
_HEADER = len(_MAGIC) + _MODEL_BYTES + 4 * 8  # magic, model, generation, rows, dimensions, hash width
# 64 bytes, so the rows' numbers in a mapped file are aligned as numpy wants them
REWRITE_AFTER = 256  # texts embedded by an update before it rewrites the cache file


@dataclass
class VectorSet:
    """Row i of `matrix` is passage `chunks[i]` of node `nodes[i]` (row ids in the index).

    `hashes[i]` is the hash of that passage's text: SQLite reuses the row ids of
    deleted passages, so a row id alone does not say the passage is the same.
    """

    generation: int
    chunks: "np.ndarray"
    nodes: "np.ndarray"
    hashes: "np.ndarray"
    matrix: "np.ndarray"


def cache_path(index: Index, fingerprint: str) -> Path:
    return index.state_dir / f"vectors-{hashlib.sha1(fingerprint.encode()).hexdigest()[:12]}.bin"


def remove_other_caches(index: Index, fingerprint: str) -> None:
    """Delete the cache files of other models (left behind when the model changed)."""
    keep = cache_path(index, fingerprint).name
    for path in index.state_dir.glob("vectors-*.bin"):
        if path.name != keep:
            path.unlink(missing_ok=True)


def load_vectors(index: Index, fingerprint: str, conn: Connection) -> VectorSet:
    """The vectors as of `conn`'s snapshot: the cache file, patched in memory when it is behind.

    A small update does not rewrite the file (see `cache_is_worth_rewriting`),
    so a reader patches the older file with what changed since, reading only
    the changed vectors from SQLite; anything else rebuilds from SQLite.
    """
    import numpy as np

    store = VectorStore(conn, index.backend)
    generation = index.generation(conn)
    path = cache_path(index, fingerprint)
    stamp = _cache_generation(path, fingerprint)
    if stamp == generation:
        cached = _read_cache(path, fingerprint, generation)
        if cached is not None:
            return cached
    elif stamp is not None and stamp < generation:
        old = _read_cache(path, fingerprint, stamp, mapped=True)
        content = _patched(store, fingerprint, generation, old) if old is not None else None
        if content is not None:
            matrix = np.concatenate(content.blocks) if len(content.blocks) > 1 else np.array(content.blocks[0])
            return VectorSet(generation, content.chunks, content.nodes, content.hashes, matrix)
    return _from_database(store, fingerprint, generation)


def cache_is_worth_rewriting(index: Index, fingerprint: str, changed: int) -> bool:
    """Whether an update that embedded `changed` texts should rewrite the cache file.

    Rewriting costs a write of every vector (95 MiB at 60k passages); after a
    few changes, readers patching the older file in memory cost far less.
    """
    return changed > REWRITE_AFTER or _cache_generation(cache_path(index, fingerprint), fingerprint) is None


def refresh_cache(index: Index, fingerprint: str) -> None:
    """Bring the cache file up to the index's generation.

    A cache from an earlier generation is patched with what changed since;
    otherwise every vector is read from SQLite.
    """
    path = cache_path(index, fingerprint)
    with index.snapshot() as conn:
        store = VectorStore(conn, index.backend)
        generation = index.generation(conn)
        stamp = _cache_generation(path, fingerprint)
        if stamp == generation:
            return
        content = None
        if stamp is not None and stamp < generation:
            old = _read_cache(path, fingerprint, stamp, mapped=True)
            content = _patched(store, fingerprint, generation, old) if old is not None else None
        if content is None:
            full = _from_database(store, fingerprint, generation)
            content = _Content(full.generation, full.chunks, full.nodes, full.hashes, [full.matrix])
    _write_cache(path, fingerprint, content)


@dataclass
class _Content:
    """What a cache file holds, its matrix as blocks of rows in order.

    A patched cache is mostly runs of the old file's rows: written block by
    block from the old file's mapped pages, it needs no new matrix in memory.
    """

    generation: int
    chunks: "np.ndarray"
    nodes: "np.ndarray"
    hashes: "np.ndarray"
    blocks: list["np.ndarray"]


def _from_database(store: VectorStore, fingerprint: str, generation: int) -> VectorSet:
    """Every passage's vector from SQLite, written row by row into one matrix.

    Streaming the rows keeps memory at the matrix itself: holding the blobs and
    joining them would take twice as much again (190 MiB more at 60k passages).
    """
    import numpy as np

    dims = store.dimensions(fingerprint)
    count = store.passages_with_vectors(fingerprint) if dims else 0
    if not count or not dims:
        empty = np.zeros(0, dtype=np.int64)
        return VectorSet(generation, empty, empty, np.zeros(0, dtype="S1"), np.zeros((0, 0), dtype=np.float32))
    chunks = np.empty(count, dtype=np.int64)
    nodes = np.empty(count, dtype=np.int64)
    matrix = np.empty((count, dims), dtype=np.float32)
    hashes: list[str] = []
    for i, (chunk, node, digest, blob) in enumerate(store.passage_vectors(fingerprint)):
        chunks[i], nodes[i] = chunk, node
        matrix[i] = np.frombuffer(blob, dtype=np.float32)
        hashes.append(digest)
    return VectorSet(generation, chunks, nodes, np.array(hashes, dtype="S"), matrix)


def _patched(store: VectorStore, fingerprint: str, generation: int, old: VectorSet) -> _Content | None:
    """The vectors as of `store`'s connection, reusing `old`'s rows; None when `old` cannot be trusted.

    Row ids only find the old row cheaply (both are sorted by them); the text
    hash decides whether its vector still applies, since SQLite gives the row
    ids of deleted passages to new ones. Nodes come from SQLite as they are now.
    """
    import numpy as np

    dims = old.matrix.shape[1]
    if len(old.chunks) == 0 or np.any(np.diff(old.chunks) <= 0):
        return None
    if store.dimensions(fingerprint) != dims:
        return None
    rows = store.vector_passages(fingerprint)
    if not rows:
        return None
    chunk_list, node_list, hash_list = zip(*rows)
    chunks = np.array(chunk_list, dtype=np.int64)
    nodes = np.array(node_list, dtype=np.int64)
    hashes = np.array(hash_list, dtype="S")
    at = np.minimum(np.searchsorted(old.chunks, chunks), len(old.chunks) - 1)
    kept = (old.chunks[at] == chunks) & (old.hashes[at] == hashes)
    changed = np.flatnonzero(~kept)
    wanted = {hash_list[i] for i in changed}
    fresh = store.vectors_of(fingerprint, wanted)
    if fresh.keys() != wanted or any(len(blob) != 4 * dims for blob in fresh.values()):
        return None
    blocks = [old.matrix[at[start]:at[start] + stop - start] if kept[start]
              else np.frombuffer(b"".join(fresh[h] for h in hash_list[start:stop]), np.float32).reshape(-1, dims)
              for start, stop in _runs(at, kept)]
    return _Content(generation, chunks, nodes, hashes, blocks)


def _runs(at: "np.ndarray", kept: "np.ndarray") -> list[tuple[int, int]]:
    """[start, stop) spans of new rows that are consecutive old rows, or all new, in order."""
    import numpy as np

    cuts = np.flatnonzero((kept[1:] != kept[:-1]) | (kept[1:] & (np.diff(at) != 1))) + 1
    bounds = [0, *cuts.tolist(), len(kept)]
    return list(zip(bounds[:-1], bounds[1:]))


def _model_stamp(fingerprint: str) -> bytes:
    return hashlib.sha256(fingerprint.encode()).digest()[:_MODEL_BYTES]


def _read_header(handle, fingerprint: str) -> tuple[int, int, int, int] | None:
    """(generation, rows, dimensions, hash width) of a cache file of this model, else None."""
    head = handle.read(_HEADER)
    if len(head) < _HEADER or not head.startswith(_MAGIC):
        return None
    if head[len(_MAGIC):len(_MAGIC) + _MODEL_BYTES] != _model_stamp(fingerprint):
        return None
    return struct.unpack_from("=qqqq", head, len(_MAGIC) + _MODEL_BYTES)


def _cache_generation(path: Path, fingerprint: str) -> int | None:
    """The generation a cache file was made from, reading only its header."""
    try:
        with path.open("rb") as handle:
            header = _read_header(handle, fingerprint)
    except OSError:
        return None
    return header[0] if header is not None else None


def _read_cache(path: Path, fingerprint: str, generation: int, *, mapped: bool = False) -> VectorSet | None:
    """The cache file if it is of this model and generation, else None.

    `mapped` maps the file instead of reading it: the writer copies most of it
    once, while a reader wants it in memory.
    """
    import numpy as np

    try:
        with path.open("rb") as handle:
            header = _read_header(handle, fingerprint)
            if header is None or header[0] != generation:
                return None
            body: np.ndarray
            if mapped:
                body = np.memmap(handle, dtype=np.uint8, mode="r", offset=_HEADER)
            else:
                body = np.fromfile(handle, dtype=np.uint8)
    except (OSError, ValueError):  # ValueError: nothing to map
        return None
    _, rows, dims, width = (int(value) for value in header)
    ids_bytes = 2 * 8 * rows
    hashes_end = ids_bytes + width * rows
    if rows < 0 or dims < 0 or width < 1 or body.size != hashes_end + 4 * rows * dims:
        return None
    ids = body[:ids_bytes].view(np.int64)
    hashes = body[ids_bytes:hashes_end].view(f"S{width}")
    matrix = body[hashes_end:].view(np.float32).reshape(rows, dims)
    return VectorSet(generation, ids[:rows], ids[rows:], hashes, matrix)


def _write_cache(path: Path, fingerprint: str, content: _Content) -> None:
    import numpy as np

    rows = len(content.chunks)
    dims = content.blocks[0].shape[1]
    hashes = np.ascontiguousarray(content.hashes)
    header = _MAGIC + _model_stamp(fingerprint) + struct.pack("=qqqq", content.generation, rows, dims,
                                                              hashes.dtype.itemsize)
    parts = (part.reshape(-1).view(np.uint8) for part in (
        np.ascontiguousarray(content.chunks, dtype=np.int64), np.ascontiguousarray(content.nodes, dtype=np.int64),
        hashes, *(np.ascontiguousarray(block, dtype=np.float32) for block in content.blocks)))
    try:
        # a cache: SQLite holds the vectors; numpy arrays are buffers, which its types do not say
        replace_file(path, itertools.chain([header], parts), sync=False)  # type: ignore[arg-type]
    except OSError:
        pass  # no cache this time; the next reader builds it from the database


def after_embed(index: Index, fingerprint: str, embedded: int) -> None:
    """What follows an embedding run: the backend's own step (PostgreSQL's HNSW index), and for
    vectors ranked in memory, the matrix cache rewritten when that is worth it. A new vector index is
    a change of the index: its generation moves, so that a warm process's searches take the graph."""
    if index.backend.after_embed(index, fingerprint, embedded):
        with write_transaction(index.conn):
            bump_generation(index.conn)
    if index.backend.dense_in_database:
        return
    if cache_is_worth_rewriting(index, fingerprint, embedded):
        refresh_cache(index, fingerprint)
    remove_other_caches(index, fingerprint)

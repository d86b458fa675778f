"""The vector cache: patched from the old file after an update, equal to a full rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import write_notes
from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index, update
from orgkit.index import vectors
from orgkit.index.vector_store import VectorStore
from orgkit.index.vectors import VectorSet, cache_path
from test_index import NOTES


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


@pytest.fixture
def rebuilds(monkeypatch) -> list[int]:
    """Counts full reads of every vector from SQLite, to tell a patch from a rebuild."""
    calls: list[int] = []
    full = vectors._from_database

    def counted(*args, **kwargs):
        calls.append(1)
        return full(*args, **kwargs)

    monkeypatch.setattr(vectors, "_from_database", counted)
    return calls


def cached(index: Index, embedder: Embedder) -> VectorSet:
    """What a reader gets: the cache file, patched in memory if it is behind; never a rebuild."""
    full = vectors._from_database
    vectors._from_database = None  # a rebuild here would fail the test
    try:
        with index.snapshot() as conn:
            return vectors.load_vectors(index, embedder.fingerprint, conn)
    finally:
        vectors._from_database = full


def assert_equals_full_rebuild(index: Index, embedder: Embedder) -> VectorSet:
    """The cache is exactly what a rebuild from SQLite gives, row for row and bit for bit."""
    got = cached(index, embedder)
    with index.snapshot() as conn:
        want = _full(VectorStore(conn, index.backend), embedder.fingerprint, index.generation(conn))
    assert len(want.chunks) > 0
    np.testing.assert_array_equal(got.chunks, want.chunks)
    np.testing.assert_array_equal(got.nodes, want.nodes)
    np.testing.assert_array_equal(got.hashes, want.hashes)
    assert got.matrix.shape == want.matrix.shape
    assert got.matrix.tobytes() == want.matrix.tobytes()
    return got


def moved(before: VectorSet, after: VectorSet, field: str) -> bool:
    """Whether a row id of `before` holds another `field` (node or text hash) in `after`."""
    old = dict(zip(before.chunks.tolist(), getattr(before, field).tolist()))
    return any(old.get(row, value) != value for row, value in zip(after.chunks.tolist(),
                                                                   getattr(after, field).tolist()))


_full = vectors._from_database  # the rebuild itself, before any test counts its calls


def test_patched_cache_equals_a_full_rebuild(notes: Path, tiny_model: Path, rebuilds: list[int]) -> None:
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes)
    update(index, embedder=embedder)
    assert rebuilds == [1]  # no cache yet: built from SQLite
    assert_equals_full_rebuild(index, embedder)

    write_notes(notes, {"seeds.org": ":PROPERTIES:\n:ID: seeds\n:END:\n#+title: Seeds\n\nSeeds grow.\n"})
    path = notes / "dogs.org"
    path.write_text(path.read_text() + "\nDogs dig in the garden.\n")
    (notes / "cats.org").unlink()
    update(index, embedder=embedder)
    assert_equals_full_rebuild(index, embedder)

    zebra = ":PROPERTIES:\n:ID: zebra\n:END:\n#+title: Zebra\n\nA striped pet.\n\n* Stripes\n{}Black and white.\n"
    write_notes(notes, {"zebra.org": zebra.format("")})
    update(index, embedder=embedder)
    before = assert_equals_full_rebuild(index, embedder)

    # The newest file is re-inserted under the same row ids; a heading that
    # gains an ID takes its passage (same row, same text) into a new node.
    write_notes(notes, {"zebra.org": zebra.format(":PROPERTIES:\n:ID: stripes\n:END:\n")})
    update(index, embedder=embedder)
    after = assert_equals_full_rebuild(index, embedder)
    assert moved(before, after, "nodes")  # nodes are read afresh, not copied
    before = after

    # The newest passages are deleted and new text takes their row ids, first
    # without a vector (words only, a generation the cache skips), then with one.
    (notes / "zebra.org").unlink()
    write_notes(notes, {"memory.org": ":PROPERTIES:\n:ID: memory\n:END:\n#+title: Memory\n\nRust ownership.\n"})
    update(index)
    update(index, embedder=embedder)
    after = assert_equals_full_rebuild(index, embedder)
    assert moved(before, after, "hashes")

    (notes / "dogs.org").unlink()
    update(index, embedder=embedder)
    assert_equals_full_rebuild(index, embedder)
    assert rebuilds == [1]  # every later cache was patched from the one before


def _truncated(path: Path, fingerprint: str, other: Path) -> None:
    path.write_bytes(path.read_bytes()[:-7])


def _garbage(path: Path, fingerprint: str, other: Path) -> None:
    path.write_bytes(b"not a cache at all")


def _older_format(path: Path, fingerprint: str, other: Path) -> None:
    path.write_bytes(b"OKVEC001" + path.read_bytes()[8:])


def _foreign_model(path: Path, fingerprint: str, other: Path) -> None:
    shutil.copyfile(other, path)


def _rewritten(path: Path, fingerprint: str, edit, later: int = 0) -> None:
    """Write the cache again with `edit(old) -> (chunks, nodes, hashes, matrix)` in it, stamped `later`."""
    old = vectors._read_cache(path, fingerprint, vectors._cache_generation(path, fingerprint))
    chunks, nodes, hashes, matrix = edit(old)
    vectors._write_cache(path, fingerprint, vectors._Content(old.generation + later, chunks, nodes, hashes,
                                                             [matrix]))


def _from_a_later_index(path: Path, fingerprint: str, other: Path) -> None:
    """As if the index had been deleted and built again: its generations start over."""
    _rewritten(path, fingerprint, lambda old: (old.chunks, old.nodes, old.hashes, old.matrix), later=1000)


def _other_dimensions(path: Path, fingerprint: str, other: Path) -> None:
    _rewritten(path, fingerprint, lambda old: (old.chunks, old.nodes, old.hashes, old.matrix[:, :8]))


def _rows_out_of_order(path: Path, fingerprint: str, other: Path) -> None:
    _rewritten(path, fingerprint, lambda old: (old.chunks[::-1], old.nodes[::-1], old.hashes[::-1],
                                               old.matrix[::-1]))


@pytest.mark.parametrize("damage", [_truncated, _garbage, _older_format, _foreign_model, _other_dimensions,
                                    _rows_out_of_order, _from_a_later_index])
def test_a_cache_that_cannot_be_trusted_is_rebuilt(notes: Path, tmp_path: Path, tiny_model: Path,
                                                   monkeypatch, rebuilds: list[int], damage) -> None:
    from tiny_model import build_tiny_model

    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes)
    update(index, embedder=embedder)
    # Another model of the same size, cached at a later generation than this one's.
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(build_tiny_model(tmp_path / "other-model", seed=1)))
    other = Embedder.from_config(load(notes))
    update(index, embedder=other)
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(tiny_model))
    vectors.refresh_cache(index, embedder.fingerprint)  # the other model's run removed this model's file
    damage(cache_path(index, embedder.fingerprint), embedder.fingerprint, cache_path(index, other.fingerprint))

    (notes / "dogs.org").unlink()  # only rows to drop: the old rows alone must be checked
    del rebuilds[:]
    update(index, embedder=embedder)  # the writer rebuilds an unreadable file; a small change leaves the rest
    with index.snapshot() as conn:
        got = vectors.load_vectors(index, embedder.fingerprint, conn)
        want = _full(VectorStore(conn, index.backend), embedder.fingerprint, index.generation(conn))
    assert rebuilds == [1]  # the writer or the reader, whichever met the damage, read SQLite instead
    assert got.matrix.tobytes() == want.matrix.tobytes() and got.chunks.tolist() == want.chunks.tolist()
    vectors.refresh_cache(index, embedder.fingerprint)
    assert_equals_full_rebuild(index, embedder)


def test_sqlite_answers_dense_and_cosines_as_the_vector_cache_ranks(notes: Path, tiny_model: Path) -> None:
    """The one storage interface: SQLite's exact scan of the stored vectors gives what search's
    in-memory matrix gives, nearest first, and each node's (or passage's) best cosine."""
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes)
    update(index, embedder=embedder)
    query = embedder.embed_query("pets that dig in the garden")
    with index.snapshot() as conn:
        cache = vectors.load_vectors(index, embedder.fingerprint, conn)
        scores = cache.matrix @ query.astype(np.float32)
        want = sorted(zip(cache.nodes.tolist(), cache.chunks.tolist(), scores.tolist()), key=lambda r: (-r[2], r[1]))
        got = index.backend.dense(conn, embedder.fingerprint, query, 3)
        nodes = sorted(set(cache.nodes.tolist()))
        best = index.backend.cosines(conn, embedder.fingerprint, query, nodes)
        passages = index.backend.cosines(conn, embedder.fingerprint, query, cache.chunks.tolist()[:2], by="rowid")
    assert not index.backend.dense_in_database and len(want) > 3
    assert [row[:2] for row in got] == [row[:2] for row in want[:3]]
    assert [row[2] for row in got] == pytest.approx([row[2] for row in want[:3]], abs=1e-6)
    assert best == pytest.approx({n: float(scores[cache.nodes == n].max()) for n in nodes}, abs=1e-6)
    assert passages == pytest.approx({int(c): float(s) for c, s in zip(cache.chunks[:2], scores[:2])}, abs=1e-6)

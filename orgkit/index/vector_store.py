"""The vectors of passage texts as the index keeps them: per model and text hash, the backlog of
texts without one, the mark that every passage has one, and the reads the in-memory matrix
(`orgkit.index.vectors`) is built from.

Statements both engines share are written once with the engine's placeholder (`backend.P`);
what differs (the work queue, ranking in the database, the vector's own type) is the backend's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple

from ..storage.backend import IndexBackend
from ..storage.db import Connection

if TYPE_CHECKING:
    from .store import Index


class PassageVector(NamedTuple):
    """A passage (its row, node and text hash) and its text's vector as stored (float32 bytes)."""

    passage: int
    node: int
    hash: str
    vector: bytes


class VectorPassage(NamedTuple):
    """A passage whose text has a vector: its row, node and text hash (no vector read)."""

    passage: int
    node: int
    hash: str


def _complete_key(fingerprint: str) -> str:
    return f"complete:{fingerprint}"  # the generation at which every passage had a vector


@dataclass
class VectorStore:
    """The vectors' statements on one connection (a reader's snapshot or the writer's transaction)."""

    conn: Connection
    backend: IndexBackend

    @classmethod
    def of(cls, index: "Index") -> "VectorStore":
        return cls(index.conn, index.backend)

    def complete_at(self, fingerprint: str) -> str | None:
        """The index generation at which every passage had a vector from this model, as recorded."""
        row = self.backend.run(self.conn, f"SELECT value FROM meta WHERE key = {self.backend.P}",
                               (_complete_key(fingerprint),)).fetchone()
        return row[0] if row else None

    def mark_complete(self, fingerprint: str, generation: int) -> None:
        """Record that at `generation` every passage has a vector from this model."""
        P = self.backend.P
        self.backend.run(self.conn, f"INSERT INTO meta VALUES ({P}, {P}) "
                                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                         (_complete_key(fingerprint), str(generation)))

    def missing_hashes(self, fingerprint: str) -> list[str]:
        """The distinct passage text hashes without a vector from this model, sorted.

        One set difference of two index scans: ten times cheaper at 60k passages
        than looking a vector up for every passage (0.01 s against 0.1 s), which
        a one-file update would pay twice.
        """
        return sorted(h for (h,) in self.backend.run(
            self.conn, f"SELECT hash FROM chunks EXCEPT SELECT hash FROM vectors WHERE model = {self.backend.P}",
            (fingerprint,)))

    def count(self, fingerprint: str) -> int:
        """How many distinct passage texts have a vector from this model."""
        return self.backend.run(self.conn, f"SELECT count(*) FROM vectors WHERE model = {self.backend.P}",
                                (fingerprint,)).fetchone()[0]

    def store(self, rows: list[tuple[str, str, Any]]) -> None:
        """Keep (model, text hash, vector) rows, a text's earlier vector from the model replaced."""
        P = self.backend.P
        self.backend.run_many(self.conn, f"INSERT INTO vectors VALUES ({P}, {P}, {P}) "
                                         "ON CONFLICT (model, hash) DO UPDATE SET vector = excluded.vector", rows)

    # The reads below build the in-memory matrix (`orgkit.index.vectors`), for a backend whose vectors
    # are float32 blobs and are ranked in the caller's memory (not `dense_in_database`).

    def dimensions(self, fingerprint: str) -> int | None:
        """The size of this model's stored float32 vectors (length() reads no blob), None with none."""
        row = self.backend.run(self.conn, f"SELECT length(vector) FROM vectors WHERE model = {self.backend.P} "
                                          "LIMIT 1", (fingerprint,)).fetchone()
        return row[0] // 4 if row else None

    def passages_with_vectors(self, fingerprint: str) -> int:
        """How many passages have a vector from this model (a text shared by two counts twice)."""
        return self.backend.run(self.conn, "SELECT count(*) FROM chunks c JOIN vectors v "
                                           f"ON v.model = {self.backend.P} AND v.hash = c.hash",
                                (fingerprint,)).fetchone()[0]

    def passage_vectors(self, fingerprint: str) -> Iterator[PassageVector]:
        """Every passage with its vector from this model, by passage row, streamed."""
        for row in self.backend.run(self.conn, "SELECT c.rowid, c.node, c.hash, v.vector FROM chunks c "
                                               f"JOIN vectors v ON v.model = {self.backend.P} AND v.hash = c.hash "
                                               "ORDER BY c.rowid", (fingerprint,)):
            yield PassageVector(*row)

    def vector_passages(self, fingerprint: str) -> list[VectorPassage]:
        """The passages `passage_vectors` gives, in its order, without their vectors.

        Two scans and a set cost less than the join, which looks a vector up in
        the other table for every passage.
        """
        present = {h for (h,) in self.backend.run(self.conn, f"SELECT hash FROM vectors WHERE model = "
                                                             f"{self.backend.P}", (fingerprint,))}
        rows = self.conn.execute("SELECT rowid, node, hash FROM chunks ORDER BY rowid")
        return [VectorPassage(*row) for row in rows if row[2] in present]

    def vectors_of(self, fingerprint: str, hashes: set[str]) -> dict[str, bytes]:
        """The stored vectors of `hashes` under this model, as raw float32 bytes."""
        return dict(self.backend.among(
            self.conn, f"SELECT hash, vector FROM vectors WHERE model = {self.backend.P} AND hash {{}}",
            sorted(hashes), (fingerprint,)))

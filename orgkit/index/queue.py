"""Embedding as a work queue: any number of workers, on any number of machines.

The backend says how texts are claimed (`IndexBackend.queue_embedding`,
`claim_batch`, `unqueue`). In PostgreSQL the texts without a vector from a
model are queued (one row per text hash); a worker claims a batch with
`SELECT ... FOR UPDATE SKIP LOCKED` inside a transaction, embeds it, stores
the vectors, takes the batch off the queue and commits, so other workers pass
over the rows it holds and take the next ones. The claim is the transaction:
a worker killed half-way leaves no claim behind, since PostgreSQL rolls its
transaction back when the session ends and the rows are free for the next
worker, and a batch is stored whole or not at all. `orgkit index --workers N`
runs N workers in one process; `orgkit index` on several machines adds
theirs. SQLite's queue is its backlog, embedded by one process
(`embedding.embed_pending`).
"""

from __future__ import annotations

import threading
from typing import Callable

from ..embed import Embedder
from .store import Index, bump_generation, missing_texts
from .vector_store import VectorStore

CLAIM = 64  # texts a worker claims at once: one embedding batch, one transaction


def fill_queue(index: Index, fingerprint: str) -> int:
    """Make every passage text without a vector from this model claimable; returns how many wait."""
    return index.backend.queue_embedding(index.conn, fingerprint)


def work(index: Index, embedder: Embedder, on_batch: Callable[[int, int], None],
         stop: threading.Event | None = None) -> None:
    """Claim, embed and store batches until the queue has nothing this worker can take."""

    conn = index.conn
    fingerprint = embedder.fingerprint
    while stop is None or not stop.is_set():
        conn.execute("BEGIN")
        try:
            hashes = index.backend.claim_batch(conn, fingerprint, CLAIM)
            if not hashes:
                conn.execute("COMMIT")
                return
            todo = missing_texts(index, hashes)  # texts whose passages are gone are dropped below
            rows, tokens = [], 0
            if todo:
                # Shortest first, in batches of bounded padded size (`plan_batches`): the claim is in hash
                # order, and as one batch it would be padded to its longest text.
                for picked, vectors, batch_tokens in embedder.embed_batches([text for _, text in todo]):
                    rows += [(fingerprint, todo[i][0], index.backend.vector_value(v))
                             for i, v in zip(picked, vectors)]
                    tokens += batch_tokens
            VectorStore(conn, index.backend).store(rows)
            index.backend.unqueue(conn, fingerprint, hashes)
            if todo:
                bump_generation(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        on_batch(len(todo), tokens)


def run_workers(index: Index, embedder: Embedder, workers: int, on_batch: Callable[[int, int], None],
                stop: threading.Event | None = None) -> None:
    """`workers` workers over the queue, each with its own connection; the first error is raised."""
    if workers == 1:
        work(index, embedder, on_batch, stop)
        return
    errors: list[BaseException] = []
    lock = threading.Lock()

    def one() -> None:
        own = Index.at(index.root, index.state_dir, index.database)
        try:
            work(own, embedder, locked, stop)
        except BaseException as exc:  # reported by the caller's thread
            errors.append(exc)
        finally:
            own.close()

    def locked(done: int, tokens: int) -> None:
        with lock:
            on_batch(done, tokens)

    threads = [threading.Thread(target=one, name=f"orgkit-embed-{k}") for k in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]

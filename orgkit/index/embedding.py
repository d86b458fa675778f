"""Giving passages their vectors: the backlog, embedded inline, by `orgkit index`, or in the background.

SQLite keys a vector by the hash of the text embedded and the model's
fingerprint, so that table is the text cache: a text shared by many passages,
files or runs is embedded once per model. What is missing is the backlog; it
is embedded in length-sorted, token-capped batches (see `Embedder.embed_batches`),
each committed on its own, so a killed run loses at most one batch and a
reader sees the vectors arrive batch by batch.

Commands must not embed a whole corpus without saying so: a query embeds a
small backlog inline (`search.inline_embed_limit`) and otherwise answers from
what is embedded; `orgkit index` embeds everything with progress; a long-lived
server hands the backlog to `BackgroundEmbedder` and switches to hybrid ranking
batch by batch as vectors land.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..embed import Embedder, ModelUnavailable
from ..errors import DatabaseUnavailable
from ..storage.db import write_transaction
from .store import Index, bump_generation, missing_texts
from .vector_store import VectorStore
from .vectors import after_embed


@dataclass
class EmbedProgress:
    """How far an embedding run is: distinct texts and their tokens, and time spent."""

    done: int = 0
    total: int = 0
    tokens: int = 0
    seconds: float = 0.0
    total_tokens: int = 0  # of every text in the run: long texts come last, so time left goes by tokens
    unit: str = "passage texts"  # what `done` and `total` count
    what: str = "embedding"  # the work being counted (evolve counts clusters of corrections with it too)


Progress = Callable[[EmbedProgress], None]


def _known_complete(vectors: VectorStore, index: Index, fingerprint: str) -> bool:
    return vectors.complete_at(fingerprint) == str(index.generation(vectors.conn))


def missing_vectors(index: Index, fingerprint: str) -> list[tuple[str, str]]:
    """(hash, text) of passages without a vector from this model, one per distinct text."""
    return missing_texts(index, VectorStore.of(index).missing_hashes(fingerprint))


def pending_count(index: Index, fingerprint: str) -> int:
    """Distinct passage texts that have no vector from this model (no model is loaded)."""
    with index.snapshot() as conn:
        vectors = VectorStore(conn, index.backend)
        if _known_complete(vectors, index, fingerprint):
            return 0
        return len(vectors.missing_hashes(fingerprint))


def embedded_count(index: Index, fingerprint: str) -> int:
    """Distinct texts that have a vector from this model."""
    with index.snapshot() as conn:
        return VectorStore(conn, index.backend).count(fingerprint)


def embed_pending(index: Index, embedder: Embedder, *, progress: Progress | None = None,
                  stop: threading.Event | None = None, workers: int = 1) -> EmbedProgress:
    """Embed every passage text that lacks a vector from `embedder`; raises ModelUnavailable.

    The model is loaded only when there is something to embed. Each batch is
    one transaction; `stop` ends the run between batches. In PostgreSQL the
    texts are a work queue that `workers` workers (and other processes) share.
    """
    conn = index.conn
    store = VectorStore(conn, index.backend)
    fingerprint = embedder.fingerprint
    state = EmbedProgress()
    if _known_complete(store, index, fingerprint):
        return state
    if index.backend.shares_embedding:
        _embed_queued(index, embedder, state, progress, stop, workers)
        if stop is not None and stop.is_set():
            return state
        return _finish(index, fingerprint, state)
    todo = missing_vectors(index, fingerprint)
    state.total = len(todo)
    if todo:
        embedder.load()
        texts = [text for _, text in todo]
        lengths = embedder.token_lengths(texts)
        state.total_tokens = sum(lengths)
        started = time.perf_counter()  # after loading and counting: the rate and ETA are embedding's own
        for picked, vectors, tokens in embedder.embed_batches(texts, lengths):
            with write_transaction(conn):
                store.store([(fingerprint, todo[i][0], index.backend.vector_value(v))
                                     for i, v in zip(picked, vectors)])
                bump_generation(conn)
            state.done += len(picked)
            state.tokens += tokens
            state.seconds = time.perf_counter() - started
            if progress is not None:
                progress(state)
            if stop is not None and stop.is_set():
                return state
    return _finish(index, fingerprint, state)


def _embed_queued(index: Index, embedder: Embedder, state: EmbedProgress, progress: Progress | None,
                  stop: threading.Event | None, workers: int) -> None:
    """Embed through the database's work queue (see `queue`), reporting each batch."""
    from .queue import fill_queue, run_workers

    state.total = fill_queue(index, embedder.fingerprint)
    if not state.total:
        return
    embedder.load()
    started = time.perf_counter()

    def on_batch(done: int, tokens: int) -> None:
        state.done += done
        state.tokens += tokens
        state.seconds = time.perf_counter() - started
        if progress is not None:
            progress(state)

    run_workers(index, embedder, workers, on_batch, stop)


def _finish(index: Index, fingerprint: str, state: EmbedProgress) -> EmbedProgress:
    """Let the backend index the vectors, then record that every passage has one (when it is so), at
    the generation a new vector index moved the index to."""
    after_embed(index, fingerprint, state.done)
    conn = index.conn
    vectors = VectorStore(conn, index.backend)
    with write_transaction(conn):
        if not vectors.missing_hashes(fingerprint):
            vectors.mark_complete(fingerprint, index.generation(conn))
    return state


@dataclass
class Backlog:
    """What a query may use: whether vectors exist, and what is still without one."""

    embedded: int  # distinct texts with a vector from the model
    pending: int  # distinct texts without one
    inline: int = 0  # of those, embedded inline just now
    error: str | None = None  # the model could not be loaded

    def warning(self) -> str | None:
        """One line for a query that answers before the backlog is embedded."""
        if self.pending and not self.error:
            return (f"{self.pending} passage(s) have no vector yet and rank by words only; "
                    "run `orgkit index` to embed them")
        return None


def embed_small_backlog(index: Index, embedder: Embedder, limit: int) -> Backlog:
    """Embed the backlog inline when it has at most `limit` texts; otherwise leave it.

    A query calls this: a few new passages (a note just written) are embedded
    at once, while a corpus never embedded is left to `orgkit index` or the
    server's background thread, and the query answers from what is embedded.
    """
    fingerprint = embedder.fingerprint
    backlog = Backlog(embedded_count(index, fingerprint), pending_count(index, fingerprint))
    if 0 < backlog.pending <= limit:
        try:
            done = embed_pending(index, embedder)
        except ModelUnavailable as exc:
            backlog.error = str(exc)
            return backlog
        backlog.inline, backlog.pending = done.done, backlog.pending - done.done
        backlog.embedded += done.done
    return backlog


class BackgroundEmbedder:
    """Embeds an index's backlog in a daemon thread while queries use what is embedded.

    The thread has its own connection to the index and takes no writer lock
    (each batch is its own SQLite transaction), so file updates go on beside
    it; a text whose passage disappeared meanwhile leaves a vector the next
    update drops. `start()` is cheap to call before every query: it starts a
    run only when none is going and there is a backlog.
    """

    def __init__(self, root: Path, state_dir: Path, embedder: Embedder, database: str | None = None) -> None:
        self.root, self.state_dir, self.embedder, self.database = root, state_dir, embedder, database
        self.progress = EmbedProgress()
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._stopped = False  # `stop` was called: the process is closing, no run starts after it
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, pending: int) -> bool:
        """Start embedding when `pending` texts wait and no run is going; whether one started."""
        with self._lock:
            if pending == 0 or self.running or self.error is not None or self._stopped:
                return False
            self._stop.clear()
            self.progress = EmbedProgress(total=pending)
            self._thread = threading.Thread(target=self._run, name="orgkit-embed", daemon=True)
            self._thread.start()
            return True

    def _run(self) -> None:
        index = Index.at(self.root, self.state_dir, self.database)
        try:
            embed_pending(index, self.embedder, progress=self._advance, stop=self._stop)
        except ModelUnavailable as exc:
            self.error = str(exc)
        except DatabaseUnavailable:
            pass  # not this run's fault: the next start, once the database is back, goes on
        except Exception as exc:  # a failed run must not kill the server; the next query hears of it
            self.error = f"background embedding failed: {type(exc).__name__}: {exc}"
        finally:
            index.close()

    def _advance(self, state: EmbedProgress) -> None:
        self.progress = EmbedProgress(state.done, state.total, state.tokens, state.seconds, state.total_tokens)

    def catch_up(self, index: Index, inline_limit: int) -> list[str]:
        """Embed a backlog of at most `inline_limit` texts now, a larger one in the background.

        Returns the lines a query should carry: progress while a run is going,
        or why no model could embed.
        """
        if not self.running:
            pending = pending_count(index, self.embedder.fingerprint)
            if 0 < pending <= inline_limit and self.error is None:
                try:
                    embed_pending(index, self.embedder)
                except ModelUnavailable as exc:
                    self.error = str(exc)
            else:
                self.start(pending)
        line = self.status()
        return [line] if line else []

    def status(self) -> str | None:
        """One line while a run is going (for a query's warnings), else None."""
        if not self.running:
            return None
        state = self.progress
        return (f"embedding in the background: {state.done} of {state.total} passage texts done; "
                "the rest rank by words only until then")

    def stop(self, timeout: float | None = None) -> None:
        """Ask the run to end after its current batch, and wait for it; start none after. Under the
        lock `start` holds while it makes and starts a run's thread, so a stop that comes between
        the two (a client hanging up as its first query starts a run) waits for a started thread."""
        with self._lock:
            self._stopped = True
            self._stop.set()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

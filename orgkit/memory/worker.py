"""Picking up unfinished work: repairs, librarian runs and auto-admission.

The worker (a server's start, the background run after a server deposit, a
one-shot deposit, `orgkit librarian`) calls `catch_up`, so work that a stopped
server or a crash left behind is never lost: interrupted deposits and batches
are repaired, deposits still `pending`, `processing` (their worker gone) or
`failed` get a librarian run (one whose note is no longer a node ends
`refused`, out of the queue), and proposals under an `auto` policy are
admitted. Listings only `repair` and count what is `waiting`: they never call
a model.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..config import Config
from ..embed import Embedder
from ..errors import OrgkitError
from ..files import LockBusy
from ..index.memo import IndexMemo
from . import librarian, watch
from .admission import admit_by_policy
from .deposit import repair_deposits
from .replayed import stored_id
from .resolver import repair_batches
from .store import UNFINISHED, Store



@dataclass
class CatchUp:
    repaired: list[str] = field(default_factory=list)
    processed: dict[str, librarian.Outcome] = field(default_factory=dict)
    admitted: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[str]:
        out = list(self.repaired)
        for dep, outcome in self.processed.items():
            out += outcome.warnings
            if outcome.status == "failed":
                out.append(f"deposit {dep}: the librarian failed: {outcome.error}")
            elif outcome.status == "refused":
                out.append(f"deposit {dep}: refused: {outcome.error}")
        return out + self.admitted


def repair(store: Store) -> list[str]:
    """Finish or undo interrupted deposits and batches."""
    done = repair_deposits(store)
    with store.writer():
        done += repair_batches(store)
    return done


def waiting(store: Store) -> int:
    """How many deposits wait for the librarian (pending, processing or failed)."""
    return store.unfinished_count()


def process(store: Store, deposit_id: str, embedder: Embedder | None = None,
            memo: IndexMemo | None = None) -> librarian.Outcome | None:
    """One librarian run for the deposit, unless another process is on it (None then); `memo`: what
    the process remembers of the notes' index (None: a memo of this run's)."""
    try:
        with store.subject_lock(f"process-{deposit_id}", wait=False):
            if store.deposit_status(deposit_id) not in UNFINISHED:
                return None
            with store.tx() as conn:
                store.mark_processing(conn, deposit_id)
            try:
                return librarian.run(store, deposit_id, embedder=embedder, memo=memo)
            except OrgkitError as exc:
                librarian.record_failure(store, deposit_id, "", str(exc), "librarian")
                return librarian.Outcome("failed", error=str(exc))
    except LockBusy:  # the subject's lock is held by a live process
        return None


def catch_up(store: Store, *, only: str | None = None, embedder: Embedder | None = None,
             memo: IndexMemo | None = None) -> CatchUp:
    """Repair, take in watched notes, run the librarian on unfinished deposits (or just
    `only`), admit by policy."""
    result = CatchUp(repaired=repair(store))
    result.repaired += watch.take_in(store)
    ids = [dep for dep in store.unfinished_deposits() if only is None or dep == only]
    if ids and embedder is None:
        embedder = Embedder.from_config(store.cfg)
    for dep in ids:
        try:
            stored_id(dep, "deposit")
        except OrgkitError as exc:  # a shipped database's row: named, left as it is
            result.repaired.append(str(exc))
            continue
        outcome = process(store, dep, embedder, memo)
        if outcome is not None:
            result.processed[dep] = outcome
    result.admitted = admit_by_policy(store)
    return result


class CatchUps:
    """`catch_up` in daemon threads, each with its own connection (a server's deposits, a server start):
    one thread per notes directory; asked again while it runs, it runs once more.

    A process holds one (ops/warm.py `ProcessState.catch_ups`). `errors` keeps each
    notes directory's last failure until its next run succeeds: that run is what
    makes it stale. A run is handed its notes' index memo, so the librarian's
    searches share what the process's calls remember of that index.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.threads: dict[str, threading.Thread] = {}
        self.again: set[str] = set()
        self.errors: dict[str, str] = {}

    def start(self, cfg: Config, embedder: Embedder | None = None, memo: IndexMemo | None = None) -> threading.Thread:
        key = str(cfg.notes.resolve())
        with self.lock:
            running = self.threads.get(key)
            if running is not None and running.is_alive():
                self.again.add(key)
                return running
            thread = threading.Thread(target=self.work, args=(key, cfg, embedder, memo), name="orgkit-librarian",
                                      daemon=True)
            self.threads[key] = thread
            thread.start()
            return thread

    def work(self, key: str, cfg: Config, embedder: Embedder | None, memo: IndexMemo | None) -> None:
        while True:
            try:
                with Store(cfg) as store:
                    catch_up(store, embedder=embedder, memo=memo)
                self.errors.pop(key, None)
            except OrgkitError as exc:  # a deposit's own failure is on its record; this is the rest
                self.errors[key] = str(exc)
            with self.lock:
                if key not in self.again:
                    return
                self.again.discard(key)

    def last_error(self, cfg: Config) -> str | None:
        return self.errors.get(str(cfg.notes.resolve()))


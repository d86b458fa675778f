"""Which worker of a team server of several processes runs the background work.

Every worker answers calls; exactly one embeds the index's backlog and runs
the librarian on unfinished deposits: the one holding the index's leader lock
(`backend.leader_lock`: a file lock beside SQLite's index, an advisory lock in
PostgreSQL). The lock is freed by the kernel or the database when its holder
dies, and the others try for it every `INTERVAL` seconds, so a killed leader's
work is taken over. The leader looks for work on the same beat: passages
without a vector, once the index has changed (any worker may have written
them), and the librarian's work when another worker asked for it (`ask`: a
deposit came in there) by touching the wake file in the state dir. Taking the
lead is a start: the librarian picks up whatever the last leader left.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import ExitStack

from ..confine import writable
from ..errors import OrgkitError
from ..files import made_dir
from ..ops import OpContext

INTERVAL = 0.5
WAKE = "librarian.wake"


class Leadership:
    """This worker's bid for the leader lock, and its background work while it holds it."""

    def __init__(self, ctx: OpContext) -> None:
        self.ctx = ctx
        self.wake = ctx.config.state_dir / WAKE
        self._woken: int | None = None  # the wake file's mtime when the librarian last started
        self._generation: int | None = None  # the index's when the backlog was last counted
        self._held = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def held(self) -> bool:
        return self._held.is_set()

    def ask(self) -> None:
        """Ask the leader to run the librarian (from a worker that does not lead)."""
        made_dir(writable(self.wake).parent)
        self.wake.touch()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="orgkit-leader", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        from ..index import Index

        index = Index.of(self.ctx.config)
        with ExitStack() as held:
            while not self._stop.is_set():
                if not self.held():
                    self._bid(index, held)
                if self.held():
                    self._work(index)
                self._stop.wait(INTERVAL)
        index.close()

    def _bid(self, index, held: ExitStack) -> None:
        """Take the leader lock if it is free (kept in `held` until the worker ends)."""
        with ExitStack() as attempt:
            try:
                taken = attempt.enter_context(index.backend.leader_lock(index))
            except (OrgkitError, OSError):  # the database or state dir is not there yet: the next beat
                return
            if taken:
                held.push(attempt.pop_all())
                self._held.set()
                print(f"orgkit: worker {os.getpid()} runs the background work (embedding, librarian)",
                      file=sys.stderr, flush=True)

    def _work(self, index) -> None:
        """Start what waits: the embedding backlog, the librarian's work when asked (or just taken over)."""
        ctx = self.ctx
        warm = ctx.held  # the server checked its config at start
        try:
            if warm.words_ready.is_set() and warm.model_ready.is_set() and not warm.background.running:
                generation = index.generation()
                if generation != self._generation:
                    from ..index.embedding import pending_count

                    warm.background.start(pending_count(index, warm.embedder.fingerprint))
                    self._generation = generation
            woken = self.wake.stat().st_mtime_ns if self.wake.exists() else 0
            if woken != self._woken:
                from ..memory.store import in_use

                self._woken = woken
                if in_use(ctx.config):
                    ctx.process.catch_ups.start(ctx.config, warm.embedder, warm.memo)
        except Exception as exc:  # noqa: BLE001 - the calls that follow say why (background_error)
            warm.background_error = f"background work failed: {exc}"

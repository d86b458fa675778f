"""What operations share: the resolved Config and the warm things, loaded when first needed.

A one-shot command builds an `OpContext`, runs one operation and exits; `serve`
and `orgkit mcp` keep one for their whole life, so the index, the embedding
model, the vectors and the skills registry are loaded once. Both run the same
operation code: only `warm` differs (a long-lived context re-checks the files
at most every `serve.recheck_after` seconds and always keeps an index; a
one-shot one checks them once, and reads by ID without building an index).

A long-lived context serves calls at the same time, from worker threads: what
belongs to one call (its warnings, errors, caller and index connection) lives
in a context variable, never on the shared object, and each call reads the
index through a connection of its own, taken from a pool and given back.
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from .. import config as config_module
from ..config import Config
from ..errors import DatabaseUnavailable, OrgkitError
from ..redact import redact

if TYPE_CHECKING:
    from ..embed import Embedder
    from ..index import Index
    from ..index.embedding import BackgroundEmbedder
    from ..retrieve.search import VectorCache
    from ..skills import Registry
    from ..texts import KeptFiles


@dataclass
class Call:
    """What belongs to one call: its warnings and errors, its verified caller, its index connection."""

    identity: Any = None  # the caller ops.call was given (orgkit.roles.Identity)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed: bool = False
    index: "Index | None" = None  # taken from the warm context's pool on first use
    progress: Callable[[Any], None] | None = None  # a server's progress hook for this call alone


_CALL: contextvars.ContextVar[Call | None] = contextvars.ContextVar("orgkit_call", default=None)


class OpContext:
    """The Config, the warm index/model/vectors/skills, and the current call's warnings and errors."""

    def __init__(self, notes: Path | None = None, flags: Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | None = None, *, base: Path | None = None,
                 warm: bool = False, config: Config | None = None) -> None:
        self._notes, self._flags, self._env = notes, dict(flags or {}), env
        self._config = config
        self.base = base  # relative paths in parameters start here; None: the working directory
        self.warm = warm
        self.surface = "serve" if warm else "cli"  # who is asking: cli, serve, mcp or http (set by the adapter)
        self._progress: Callable[[Any], None] | None = None  # the context's own (the command line's bar)
        self.on_wait: Callable[[], None] | None = None
        self._outside = Call()  # warnings of work done outside any call (a one-shot command's own)
        self._pool: list[Index] = []  # idle index connections of a warm context, one per call at a time
        self._pool_lock = threading.Lock()
        self._refreshing = threading.Lock()  # one check of the files at a time; the others wait for it
        self.limits: Any = None  # the team server's per-token rates (ops/rates.py RateLimits); None: no limit
        self.leader: Any = None  # a server of several processes: its bid for the background work
        # (held() and ask(), orgkit.http.leader.Leadership); None: a single process, which always runs it
        # Cleared while a background warm-up runs: first the word index, then the model and vectors.
        self.words_ready = threading.Event()
        self.model_ready = threading.Event()
        self.words_ready.set()
        self.model_ready.set()
        self._warming: threading.Thread | None = None
        self.background_error: str | None = None
        self._index: Index | None = None
        self._embedder: Embedder | None = None
        self._cache: VectorCache | None = None
        self._kept: KeptFiles | None = None
        self._skills: Registry | None = None
        self._checked: dict[bool, float] = {}  # embed? -> when the files were last checked
        self._background: BackgroundEmbedder | None = None

    @property
    def trusted(self) -> bool:
        """Whether the caller is the user (the command line): a server's clients name only files in the notes."""
        return self.surface == "cli"

    # -- one call -------------------------------------------------------

    @property
    def current(self) -> Call:
        """The running call's own state (outside a call: the context's own)."""
        return _CALL.get() or self._outside

    @contextmanager
    def call(self, identity: Any = None, progress: Callable[[Any], None] | None = None) -> Iterator[Call]:
        """One call: fresh warnings and errors, `identity` as its caller, `progress` as its own
        progress hook (a server's), its index connection given back after."""
        state = Call(identity, progress=progress)
        token = _CALL.set(state)
        try:
            yield state
        except DatabaseUnavailable:
            self._drop_pool(state)  # every idle connection went with the server: the next call connects afresh
            raise
        finally:
            _CALL.reset(token)
            if state.index is not None:
                with self._pool_lock:
                    self._pool.append(state.index)

    def _drop_pool(self, state: Call) -> None:
        with self._pool_lock:
            lost = self._pool + ([state.index] if state.index is not None else [])
            self._pool, state.index = [], None
        for index in lost:
            try:
                index.close()
            except Exception:  # noqa: BLE001 - closing a connection the server already dropped
                pass

    @property
    def identity(self) -> Any:
        return self.current.identity

    @property
    def progress(self) -> Callable[[Any], None] | None:
        """Where progress goes (called with an EmbedProgress per batch): the running call's own
        hook, else the context's (the command line's bar)."""
        return self.current.progress or self._progress

    @progress.setter
    def progress(self, hook: Callable[[Any], None] | None) -> None:
        self._progress = hook

    @property
    def warnings(self) -> list[str]:
        return self.current.warnings

    @property
    def errors(self) -> list[str]:
        return self.current.errors

    @property
    def failed(self) -> bool:
        return self.current.failed

    @failed.setter
    def failed(self, value: bool) -> None:
        self.current.failed = value

    def may_work_in_background(self) -> bool:
        """Whether this process runs background embedding and the librarian (in a server of
        several processes, only the one holding the leader lock does)."""
        return self.leader is None or self.leader.held()

    def hand_over(self) -> None:
        """Ask the process that leads to pick up waiting work (the librarian's), as a start would."""
        if self.leader is not None:
            self.leader.ask()

    def warn(self, message: str) -> None:
        message = redact(message)
        if message not in self.current.warnings:
            self.current.warnings.append(message)

    def error(self, message: str) -> None:
        """A partial failure: the result is still given, and the call counts as failed."""
        self.current.errors.append(redact(message))
        self.current.failed = True

    # -- configuration --------------------------------------------------

    @property
    def config(self) -> Config:
        """The resolved config; a bad setting or file is the call's one-line error."""
        loaded = self.loaded_config()
        if loaded.problems:
            raise OrgkitError(loaded.problems[0])
        return loaded

    def loaded_config(self) -> Config:
        """The config as far as it resolves, its problems listed in `problems` (for `orgkit config`)."""
        if self._config is None:
            self._config = config_module.load(self._notes, self._flags, self._env, lenient=True)
        return self._config

    def optional_config(self) -> Config | None:
        """The config, or None where there is no notes directory (some operations need none)."""
        try:
            return self.config
        except OrgkitError:
            return None

    @property
    def root(self) -> Path:
        return self.config.notes

    def path(self, text: str) -> Path:
        """A path parameter: absolute, or relative to `base` (servers: the notes; the shell: as given).

        A server's client never names a path from the server's working directory: without a
        base, its relative paths start at the notes too.
        """
        path = Path(text).expanduser()
        base = self.base if self.base is not None or self.trusted else self.root
        return path if path.is_absolute() or base is None else base / path

    # -- warm things ----------------------------------------------------

    @property
    def index(self) -> "Index":
        """The index: in a warm context's call, a connection of the call's own (from the pool)."""
        call = _CALL.get()
        if self.warm and call is not None:
            if call.index is None:
                call.index = self._pooled_index()
            return call.index
        if self._index is None:
            from ..index import Index

            self._index = Index.of(self.config)
        return self._index

    def _pooled_index(self) -> "Index":
        with self._pool_lock:
            if self._pool:
                return self._pool.pop()
        from ..index import Index

        return Index.of(self.config)

    @property
    def embedder(self) -> "Embedder":
        if self._embedder is None:
            from ..embed import Embedder

            self._embedder = Embedder.from_config(self.config)
        return self._embedder

    @property
    def cache(self) -> "VectorCache":
        if self._cache is None:
            from ..retrieve.search import VectorCache

            self._cache = VectorCache()
        return self._cache

    @property
    def kept(self) -> "KeptFiles | None":
        """A warm context's note files, kept read and parsed between calls (one-shot: None, each file is
        read once anyway)."""
        if not self.warm or not self.config.has_notes:
            return None
        if self._kept is None:
            from ..texts import KeptFiles

            self._kept = KeptFiles(self.root)
        return self._kept

    def skills(self) -> "Registry":
        """The skills registry, loaded on first use, its warnings reported once."""
        if self._skills is None:
            from ..skills import load_registry

            self._skills = load_registry(self.root, self.config)
        for message in self._skills.warnings:
            self.warn(message)
        return self._skills

    def query_embedder(self) -> "Embedder | None":
        """The model for a query, or None (with a warning) while it is still loading."""
        if not self.model_ready.is_set():
            self.warn("the embedding model is still loading; these results rank by words only")
            return None
        return self.embedder

    # -- keeping the index fresh ----------------------------------------

    def refresh(self, embed: bool = True) -> None:
        """Bring the index up to date: once for a one-shot call, at most every few seconds when warm.

        The words always; then, with `embed`, the passages that lack a vector:
        a backlog of at most `search.inline_embed_limit` texts is embedded now,
        a larger one is left to `orgkit index` (one-shot: a warning says so) or
        to the background thread (warm), and queries answer from what is
        embedded meanwhile. No call embeds a corpus unannounced.
        """
        from ..config import ensure_state_dir
        from ..index import IndexBusy, update
        from ..index.update import checked_ago, note_checked

        if not self.config.has_notes:
            return  # no files to bring the shared index up to date with: it is as their writer left it
        self.words_ready.wait()  # while a warm-up builds the word index (a short pass), there is nothing to use
        if self.background_error:
            self.warn(self.background_error)
        if not self.model_ready.is_set():
            embed = False  # words only until the model is loaded
        recheck = self.config["serve.recheck_after"] if self.warm else math.inf
        with self._refreshing:
            last = max(self._checked.get(embed, -math.inf), self._checked.get(True, -math.inf))
            if last > -math.inf and time.monotonic() - last < recheck:
                if embed and self.warm:
                    self._embedding_status()
                return
            ensure_state_dir(self.config)
            state_dir, stats = self.config.state_dir, None
            ago = checked_ago(state_dir) if self.warm else None
            if ago is not None and ago < recheck:  # a sibling worker checked the files: its check counts
                self._checked[embed] = time.monotonic() - ago
            else:
                began = time.time()
                try:
                    stats = update(self.index, embedder=None, wait=False)
                    note_checked(state_dir, began)
                except IndexBusy:  # another process writes: use the index as it is
                    self.warn("another orgkit process is updating the index; using it as it is")
                self._checked[embed] = time.monotonic()
            for message in stats.warnings if stats is not None else []:
                self.warn(message)
            if embed:
                self._embed_backlog()

    def _embed_backlog(self) -> None:
        """Embed a small backlog now; a larger one in the background (warm) or by `orgkit index`."""
        from ..index.embedding import embed_small_backlog

        limit = self.config["search.inline_embed_limit"]
        if self.warm and not self.may_work_in_background():
            return  # the process leading a server of several embeds; queries answer from what is embedded
        if self.warm:
            for line in self.background.catch_up(self.index, limit):
                self.warn(line)
            return
        backlog = embed_small_backlog(self.index, self.embedder, limit)
        pending = backlog.warning() if backlog.embedded else None  # with no vectors at all, search says why
        if pending:
            self.warn(pending)

    def _embedding_status(self) -> None:
        line = self._background.status() if self._background is not None else None
        if line:
            self.warn(line)

    @property
    def background(self) -> "BackgroundEmbedder":
        """The warm context's background embedding run (one at a time)."""
        if self._background is None:
            from ..index.embedding import BackgroundEmbedder

            self._background = BackgroundEmbedder(self.root, self.config.state_dir, self.embedder,
                                                  self.config["database.url"])
        return self._background

    def lookup_index(self) -> "Index | None":
        """The index for lookups by ID, brought up to date; None when a one-shot call finds none built.

        Lookups work without it (a ripgrep pass), so a one-shot `read` never
        pays for building one; a warm server always keeps one.
        """
        if not self.warm and not self.index.exists():
            return None
        self.refresh(embed=False)
        return self.index

    def start_warm_up(self) -> None:
        """Build the word index, then load the model and embed, in background threads (once).

        Until the words are indexed, calls wait for them (a short pass); until
        the model is loaded, searches rank by words and say so; then they rank
        by meaning over what is embedded, while the backlog is embedded in the
        background batch by batch.
        """
        if self._warming is not None:
            return
        self.embedder  # made here, so that no call makes a second one while the thread loads it
        self.words_ready.clear()
        self.model_ready.clear()
        self._warming = threading.Thread(target=self._warm_up, name="orgkit-warm-up", daemon=True)
        self._warming.start()

    def warming(self) -> bool:
        """Whether the background warm-up is still running."""
        return self._warming is not None and self._warming.is_alive()

    def _warm_up(self) -> None:
        from ..config import ensure_state_dir
        from ..embed import ModelUnavailable
        from ..index import Index, update
        from ..index.embedding import pending_count

        own = None
        try:
            if not self.config.has_notes:  # a reader of a shared database: nothing to index or embed here
                self.embedder.load()
                return
            ensure_state_dir(self.config)
            own = Index.of(self.config)  # its own connection: calls go on meanwhile
            update(own, embedder=None)
            self.words_ready.set()
            self.embedder.load()
            self.model_ready.set()
            if self.may_work_in_background():
                self.background.start(pending_count(own, self.embedder.fingerprint))
        except ModelUnavailable:
            pass  # searches say so, and rank by words
        except Exception as exc:  # noqa: BLE001 - the calls that follow report the index's own errors
            self.background_error = f"background indexing failed: {exc}"
        finally:
            if own is not None:
                own.close()
            self.words_ready.set()
            self.model_ready.set()

    def close(self) -> None:
        if self._background is not None:
            self._background.stop()
        if self._index is not None:
            self._index.close()
        with self._pool_lock:
            for index in self._pool:
                index.close()
            self._pool.clear()

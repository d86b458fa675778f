"""What operations share: the resolved Config and the warm things, loaded when first needed.

A one-shot command builds an `OpContext`, runs one operation and exits; `serve`
and `orgkit mcp` keep one for their whole life, so the index, the embedding
model, the vectors and the skills registry are loaded once. Both run the same
operation code: only `warm` differs (a long-lived context re-checks the files
at most every `serve.recheck_after` seconds and always keeps an index; a
one-shot one checks them once, and reads by ID without building an index).
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .. import config as config_module
from ..config import Config
from ..errors import OrgkitError
from ..redact import redact

if TYPE_CHECKING:
    from ..embed import Embedder
    from ..index import Index
    from ..index.embedding import BackgroundEmbedder
    from ..retrieve.search import VectorCache
    from ..skills import Registry


class OpContext:
    """The Config, the warm index/model/vectors/skills, and one call's warnings and errors."""

    def __init__(self, notes: Path | None = None, flags: Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | None = None, *, base: Path | None = None,
                 warm: bool = False, config: Config | None = None) -> None:
        self._notes, self._flags, self._env = notes, dict(flags or {}), env
        self._config = config
        self.base = base  # relative paths in parameters start here; None: the working directory
        self.warm = warm
        self.surface = "serve" if warm else "cli"  # who is asking: cli, serve, mcp or http (set by the adapter)
        self.identity: Any = None  # the team server's verified caller during a call (orgkit.tokens.Identity)
        self.progress: Callable[[Any], None] | None = None  # called with an EmbedProgress per batch
        self.on_wait: Callable[[], None] | None = None
        self.lock = threading.RLock()  # one operation at a time on the shared index
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
        self._skills: Registry | None = None
        self._checked: dict[bool, float] = {}  # embed? -> when the files were last checked
        self._background: BackgroundEmbedder | None = None
        self.begin()

    @property
    def trusted(self) -> bool:
        """Whether the caller is the user (the command line): a server's clients name only files in the notes."""
        return self.surface == "cli"

    # -- one call -------------------------------------------------------

    def begin(self) -> None:
        """Start a call: no warnings, no errors yet."""
        self.warnings: list[str] = []
        self.errors: list[str] = []
        self.failed = False

    def warn(self, message: str) -> None:
        message = redact(message)
        if message not in self.warnings:
            self.warnings.append(message)

    def error(self, message: str) -> None:
        """A partial failure: the result is still given, and the call counts as failed."""
        self.errors.append(redact(message))
        self.failed = True

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
        if self._index is None:
            from ..index import Index

            self._index = Index.of(self.config)
        return self._index

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

        if not self.config.has_notes:
            return  # no files to bring the shared index up to date with: it is as their writer left it
        self.words_ready.wait()  # while a warm-up builds the word index (a short pass), there is nothing to use
        if self.background_error:
            self.warn(self.background_error)
        if not self.model_ready.is_set():
            embed = False  # words only until the model is loaded
        recheck = self.config["serve.recheck_after"] if self.warm else math.inf
        last = max(self._checked.get(embed, -math.inf), self._checked.get(True, -math.inf))
        if last > -math.inf and time.monotonic() - last < recheck:
            if embed and self.warm:
                self._embedding_status()
            return
        ensure_state_dir(self.config)
        try:
            stats = update(self.index, embedder=None, wait=False)
        except IndexBusy:  # another process writes: use the index as it is
            self.warn("another orgkit process is updating the index; using it as it is")
            stats = None
        self._checked[embed] = time.monotonic()
        for message in stats.warnings if stats is not None else []:
            self.warn(message)
        if embed:
            self._embed_backlog()

    def _embed_backlog(self) -> None:
        """Embed a small backlog now; a larger one in the background (warm) or by `orgkit index`."""
        from ..index.embedding import embed_small_backlog

        limit = self.config["search.inline_embed_limit"]
        if self.warm:
            for line in self.background.catch_up(self.index, limit):
                self.warn(line)
            return
        backlog = embed_small_backlog(self.index, self.embedder, limit)
        line = backlog.warning() if backlog.embedded else None  # with no vectors at all, search says why
        if line:
            self.warn(line)

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

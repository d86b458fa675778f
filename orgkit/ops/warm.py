"""What a process keeps between calls: one `ProcessState`, holding a `Warm` per notes directory.

A one-shot command makes one for its one call; `serve`, `orgkit mcp` and each
worker process of the team server make one at start and keep it, so the index
connections, the embedding model, the vectors, the note files and the skills
are loaded once and every call after the first finds them. Each thing kept
has one owner here and one rule for when it is stale, written where it is
declared.

A process may serve several notes directories (a test, a library user, one
server per folder): each gets a `Warm` of its own, keyed by its notes and state
dirs, so nothing one folder's calls kept is ever read by another's.

What stays at a module's top level is no memo of a folder's data: tables built
at import (the registry), registrations made once (the write roots of
confine.py, the deposits provider of instructions.py, the prompt watchers),
warn-once records (config.py, tangle/journal.py), the live connections of the
one event loop (http/protocol.py), and lru_caches of pure functions of small
keys (compiled org patterns, result schemas, where rg is for a value of
$ORGKIT_RG, the roots `notes.follow_roots` gives for one version of the user's
file), and the word lists of the language (index/lexicon.py: package data,
no folder's). The engines' connection pools, schema checks and tokenizer (storage/,
keyed by database URL or by the text) and the loaded GGUF models (llm/gguf.py,
keyed by file) are still kept by their own modules.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from ..config import Config

if TYPE_CHECKING:
    from ..embed import Embedder
    from ..index import Index
    from ..index.memo import IndexMemo
    from ..index.embedding import BackgroundEmbedder
    from ..memory.worker import CatchUps
    from ..retrieve.search import VectorCache
    from .rates import RateLimits
    from ..skills import Registry
    from ..texts import KeptFiles

Warn = Callable[[str], None]  # where a warning for the running call goes
Leads = Callable[[], bool]  # whether this process runs background work (one of a server's processes does)


class Warm:
    """The warm things of one notes directory, as one resolved config names them.

    Owned by the process's `ProcessState`, which makes a new one (and closes
    this) when a context resolves another config for the same folders, so
    every member here is stale with the config, and besides:
    - `memo` (the index's word counts, stems, cuts): the index's generation
      (index/memo.py);
    - the index connections in the pool: never (each reads what is committed);
    - `vectors`: the index's generation and the model's fingerprint
      (retrieve/search.py's VectorCache);
    - `kept`, the note files read and parsed: each file's mtime, size and inode
      (texts.py's KeptFiles);
    - `embedder`, `skills`, `background`: the config alone (a model, or skill
      code from the notes, is loaded once; a changed skill file takes a restart);
    - `checked`: when the files were last compared with the index, so a warm
      process rechecks them at most every `serve.recheck_after` seconds.
    """

    def __init__(self, config: Config, process: "ProcessState") -> None:
        self.config = config
        self._process = process  # whose word lists the memo reads
        self._memo: IndexMemo | None = None
        self._pool: list[Index] = []  # idle index connections, one per running call at a time
        self._pool_lock = threading.Lock()
        self._making = threading.RLock()  # one of each member made, whichever call asks first
        self._embedder: Embedder | None = None
        self._vectors: VectorCache | None = None
        self._kept: KeptFiles | None = None
        self._skills: Registry | None = None
        self._background: BackgroundEmbedder | None = None
        self.checked: dict[bool, float] = {}  # embed? -> when the files were last checked
        self.written = -math.inf  # when (time.time()) an operation of this process last wrote notes
        self.refreshing = threading.Lock()  # one check of the files at a time; the others wait for it
        # Cleared while a background warm-up runs: first the word index, then the model and vectors.
        self.words_ready = threading.Event()
        self.model_ready = threading.Event()
        self.words_ready.set()
        self.model_ready.set()
        self._warming: threading.Thread | None = None
        self.background_error: str | None = None

    # -- the index --------------------------------------------------------

    @property
    def memo(self) -> "IndexMemo":
        """What calls remember of the index (made on first use: a scan that reads no index loads none of it)."""
        with self._making:
            if self._memo is None:
                from ..index.memo import IndexMemo

                self._memo = IndexMemo()
            return self._memo

    def index(self) -> "Index":
        """A connection of its own to the notes' index, sharing this folder's memo."""
        from ..index import Index

        return Index.of(self.config, memo=self.memo)

    def take(self) -> "Index":
        """An idle connection from the pool, or a new one (give it back after the call)."""
        with self._pool_lock:
            if self._pool:
                return self._pool.pop()
        return self.index()

    def give_back(self, index: "Index") -> None:
        with self._pool_lock:
            self._pool.append(index)

    def drop_pool(self, *more: "Index") -> None:
        """Close every idle connection (and `more`): the database server went away with them."""
        with self._pool_lock:
            lost, self._pool = self._pool + list(more), []
        for index in lost:
            try:
                index.close()
            except Exception:  # noqa: BLE001 - closing a connection the server already dropped
                pass

    # -- models, vectors, files, skills -----------------------------------

    @property
    def embedder(self) -> "Embedder":
        with self._making:
            if self._embedder is None:
                from ..embed import Embedder

                self._embedder = Embedder.from_config(self.config)
            return self._embedder

    @property
    def vectors(self) -> "VectorCache":
        with self._making:
            if self._vectors is None:
                from ..retrieve.search import VectorCache

                self._vectors = VectorCache()
            return self._vectors

    @property
    def kept(self) -> "KeptFiles | None":
        """The note files, kept read and parsed between calls (None without a copy of the notes)."""
        if not self.config.has_notes:
            return None
        with self._making:
            if self._kept is None:
                from ..texts import KeptFiles

                self._kept = KeptFiles(self.config.notes)
            return self._kept

    def skills(self) -> "Registry":
        """The skills registry, loaded on first use."""
        with self._making:
            if self._skills is None:
                from ..skills import load_registry

                self._skills = load_registry(self.config.notes, self.config)
            return self._skills

    @property
    def background(self) -> "BackgroundEmbedder":
        """The background embedding run (one at a time)."""
        embedder = self.embedder
        with self._making:
            if self._background is None:
                from ..index.embedding import BackgroundEmbedder

                self._background = BackgroundEmbedder(self.config.notes, self.config.state_dir, embedder,
                                                      self.config["database.url"])
            return self._background

    # -- keeping the index fresh ------------------------------------------

    def notes_written(self) -> None:
        """An operation of this process wrote notes: the next call checks the files itself, at once,
        whatever the last check's time or a sibling's stamp (begun before the write) says."""
        with self.refreshing:
            self.checked.clear()
            self.written = time.time()

    def refresh(self, index: "Index", *, embed: bool, long_lived: bool, warn: Warn, leads: Leads) -> None:
        """Bring the index up to date: once for a one-shot call, at most every few seconds when long-lived.

        The words always; then, with `embed`, the passages that lack a vector:
        a backlog of at most `search.inline_embed_limit` texts is embedded now,
        a larger one is left to `orgkit index` (one-shot: a warning says so) or
        to the background thread (long-lived), and queries answer from what is
        embedded meanwhile. No call embeds a corpus unannounced.
        """
        from ..config import ensure_state_dir
        from ..index import IndexBusy, update
        from ..index.update import checked_ago, note_checked

        if not self.config.has_notes:
            return  # no files to bring the shared index up to date with: it is as their writer left it
        self.words_ready.wait()  # while a warm-up builds the word index (a short pass), there is nothing to use
        if self.background_error:
            warn(self.background_error)
        if not self.model_ready.is_set():
            embed = False  # words only until the model is loaded
        recheck = self.config["serve.recheck_after"] if long_lived else math.inf
        with self.refreshing:
            last = max(self.checked.get(embed, -math.inf), self.checked.get(True, -math.inf))
            if last > -math.inf and time.monotonic() - last < recheck:
                if embed and long_lived and self._background is not None:
                    line = self._background.status()
                    if line:
                        warn(line)
                return
            ensure_state_dir(self.config)
            state_dir, stats = self.config.state_dir, None
            ago = checked_ago(state_dir) if long_lived else None
            if ago is not None and ago < recheck and time.time() - ago >= self.written:
                # a sibling worker checked the files since this process last wrote them: its check counts
                self.checked[embed] = time.monotonic() - ago
            else:
                began = time.time()
                try:
                    stats = update(index, embedder=None, wait=False)
                    note_checked(state_dir, began)
                except IndexBusy:  # another process writes: use the index as it is
                    warn("another orgkit process is updating the index; using it as it is")
                self.checked[embed] = time.monotonic()
            for message in stats.warnings if stats is not None else []:
                warn(message)
            if embed:
                self._embed_backlog(index, long_lived, warn, leads)

    def _embed_backlog(self, index: "Index", long_lived: bool, warn: Warn, leads: Leads) -> None:
        """Embed a small backlog now; a larger one in the background (long-lived) or by `orgkit index`."""
        from ..index.embedding import embed_small_backlog

        limit = self.config["search.inline_embed_limit"]
        if long_lived and not leads():
            return  # the process leading a server of several embeds; queries answer from what is embedded
        if long_lived:
            for line in self.background.catch_up(index, limit):
                warn(line)
            return
        backlog = embed_small_backlog(index, self.embedder, limit)
        pending = backlog.warning() if backlog.embedded else None  # with no vectors at all, search says why
        if pending:
            warn(pending)

    def start_warm_up(self, leads: Leads) -> None:
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
        self._warming = threading.Thread(target=self._warm_up, args=(leads,), name="orgkit-warm-up", daemon=True)
        self._warming.start()

    def warming(self) -> bool:
        """Whether the background warm-up is still running."""
        return self._warming is not None and self._warming.is_alive()

    def _warm_up(self, leads: Leads) -> None:
        from ..config import ensure_state_dir
        from ..embed import ModelUnavailable
        from ..index import update
        from ..index.embedding import pending_count

        own = None
        try:
            if not self.config.has_notes:  # a reader of a shared database: nothing to index or embed here
                self.embedder.load()
                return
            ensure_state_dir(self.config)
            own = self.index()  # its own connection: calls go on meanwhile
            update(own, embedder=None)
            self.words_ready.set()
            self.embedder.load()
            self.model_ready.set()
            if leads():
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
        self.drop_pool()


class ProcessState:
    """Everything a process keeps between calls: the `Warm` of each notes directory it serves, the
    librarian's catch-up threads, one per notes directory (memory/worker.py `CatchUps`), and, in a
    team server's worker, its per-token rate buckets (which refill with time, never go stale) and
    its bid for the background work."""

    def __init__(self) -> None:
        self._catch_ups: CatchUps | None = None
        self.limits: RateLimits | None = None  # the team server's per-token rates; None: no limit
        # a server of several processes: its bid for the background work (held() and ask(),
        # orgkit.http.leader.Leadership); None: a single process, which always runs it
        self.leader: Any = None
        self._warm: dict[tuple[str, str], Warm] = {}
        self._lock = threading.Lock()

    @property
    def catch_ups(self) -> "CatchUps":
        with self._lock:
            if self._catch_ups is None:
                from ..memory.worker import CatchUps

                self._catch_ups = CatchUps()
            return self._catch_ups

    def warm(self, config: Config) -> Warm:
        """The warm things of `config`'s notes and state dirs; made anew (the old ones closed) when
        `config` resolves to other values than the config they were made for."""
        key = (str(config.notes), str(config.state_dir))
        with self._lock:
            held = self._warm.get(key)
            if held is not None and (held.config is config or held.config.values == config.values):
                return held
            self._warm[key] = fresh = Warm(config, self)
        if held is not None:
            held.close()
        return fresh

    def release(self, config: Config) -> None:
        """Close and forget the warm things of `config`'s folders (its context is done with them)."""
        with self._lock:
            held = self._warm.pop((str(config.notes), str(config.state_dir)), None)
        if held is not None:
            held.close()

    def close(self) -> None:
        with self._lock:
            held, self._warm = list(self._warm.values()), {}
        for warm in held:
            warm.close()

"""What a call needs: the resolved Config, its caller, its index connection, its progress.

A one-shot command builds an `OpContext`, runs one operation and exits; `serve`,
`orgkit mcp` and the team server's workers keep one for their whole life. What a
process keeps between calls (the index connections, the embedding model, the
vectors, the note files, the skills) is not the context's: it belongs to the
process's `ProcessState` (ops/warm.py), which the context holds a reference to
and which a one-shot context makes for itself. Both run the same operation
code: only `warm` differs (a long-lived context re-checks the files at most
every `serve.recheck_after` seconds and always keeps an index; a one-shot one
checks them once, and reads by ID without building an index).

A long-lived context serves calls at the same time, from worker threads: what
belongs to one call (its warnings, errors, caller and index connection) lives
in a context variable, never on the shared object, and each call reads the
index through a connection of its own, taken from a pool and given back.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from .. import config as config_module
from ..config import Config
from ..errors import DatabaseUnavailable, OrgkitError
from ..redact import redact
from .warm import ProcessState, Warm

if TYPE_CHECKING:
    from ..embed import Embedder
    from ..index import Index
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
    """The Config, the process's state, and the current call's caller, index, warnings and errors."""

    def __init__(self, notes: Path | None = None, flags: Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | None = None, *, base: Path | None = None,
                 warm: bool = False, config: Config | None = None, process: ProcessState | None = None) -> None:
        self._notes, self._flags, self._env = notes, dict(flags or {}), env
        self._config = config
        self.base = base  # relative paths in parameters start here; None: the working directory
        self.warm = warm
        self.surface = "serve" if warm else "cli"  # who is asking: cli, serve, mcp or http (set by the adapter)
        self._progress: Callable[[Any], None] | None = None  # the context's own (the command line's bar)
        self.on_wait: Callable[[], None] | None = None
        self._outside = Call()  # warnings of work done outside any call (a one-shot command's own)
        self.process = process if process is not None else ProcessState()  # what the process keeps between calls
        self._index: Index | None = None  # a one-shot context's one connection

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
            # every idle connection went with the server: the next call connects afresh
            lost, state.index = state.index, None
            self.held.drop_pool(*([lost] if lost is not None else []))
            raise
        finally:
            _CALL.reset(token)
            if state.index is not None:
                self.held.give_back(state.index)

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
        leader = self.process.leader
        return leader is None or leader.held()

    def hand_over(self) -> None:
        """Ask the process that leads to pick up waiting work (the librarian's), as a start would."""
        if self.process.leader is not None:
            self.process.leader.ask()

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

    # -- what the process keeps -------------------------------------------

    @property
    def held(self) -> Warm:
        """What the process keeps for this context's notes (ops/warm.py)."""
        return self.process.warm(self.config)

    @property
    def index(self) -> "Index":
        """The index: in a warm context's call, a connection of the call's own (from the pool)."""
        call = _CALL.get()
        if self.warm and call is not None:
            if call.index is None:
                call.index = self.held.take()
            return call.index
        if self._index is None:
            self._index = self.held.index()
        return self._index

    @property
    def embedder(self) -> "Embedder":
        return self.held.embedder

    @property
    def cache(self) -> "VectorCache":
        return self.held.vectors

    @property
    def kept(self) -> "KeptFiles | None":
        """A warm context's note files, kept read and parsed between calls (one-shot: None, each file is
        read once anyway)."""
        return self.held.kept if self.warm else None

    def skills(self) -> "Registry":
        """The skills registry, loaded on first use, its warnings reported to every call that asks."""
        registry = self.held.skills()
        for message in registry.warnings:
            self.warn(message)
        return registry

    def query_embedder(self) -> "Embedder | None":
        """The model for a query, or None (with a warning) while it is still loading."""
        if not self.held.model_ready.is_set():
            self.warn("the embedding model is still loading; these results rank by words only")
            return None
        return self.embedder

    def refresh(self, embed: bool = True) -> None:
        """Bring the index up to date (Warm.refresh), the call's warnings to the call."""
        self.held.refresh(self.index, embed=embed, long_lived=self.warm, warn=self.warn,
                          leads=self.may_work_in_background)

    def lookup_index(self) -> "Index | None":
        """The index for lookups by ID, brought up to date; None when a one-shot call finds none built.

        Lookups by ID work without it (a ripgrep pass), so a one-shot `read`
        by ID never pays for building one; a warm server always keeps one.
        """
        if not self.warm and not self.index.exists():
            return None
        self.refresh(embed=False)
        return self.index

    def start_warm_up(self) -> None:
        """Index the words, then load the model and embed, in the background (Warm.start_warm_up)."""
        self.held.start_warm_up(self.may_work_in_background)

    def close(self) -> None:
        """Close the one-shot connection and what the process keeps for these notes."""
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._config is not None and not self._config.problems:
            self.process.release(self._config)

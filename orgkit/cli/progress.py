"""Embedding progress on stderr: a live bar on a terminal, a plain line now and then when piped.

A run that takes minutes must not look like a hang, and one whose output goes
to a log must leave a trace in it; `--quiet` turns both off.
"""

from __future__ import annotations

import sys
import time
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # every command sets up progress; only embedding ones need the index
    from ..index.embedding import EmbedProgress

PLAIN_EVERY = 10.0  # seconds between plain lines when stderr is not a terminal
BAR_WIDTH = 24


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def describe(state: EmbedProgress) -> str:
    """`1,234/3,111 passage texts (40%), 2,480 tokens/s, ETA 1m12s`."""
    share = state.done / state.total if state.total else 1.0
    rate = state.tokens / state.seconds if state.seconds > 0 else 0.0
    left = state.total_tokens - state.tokens  # texts come shortest first: tokens tell the time left
    eta = left / rate if rate > 0 and state.total_tokens else None
    tail = f", ETA {_duration(eta)}" if eta is not None and state.done < state.total else ""
    speed = f", {rate:,.0f} tokens/s" if state.tokens else ""
    return f"{state.done:,}/{state.total:,} {state.unit} ({share:.0%}){speed}{tail}"


class ProgressReport:
    """A callable for `update(progress=...)`; `close()` ends the bar's line."""

    def __init__(self, stream: IO[str] | None = None, *, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = not quiet and self.stream.isatty()
        self._last = 0.0
        self._drawn = False
        self._state: EmbedProgress | None = None

    def __call__(self, state: EmbedProgress) -> None:
        if self.quiet:
            return
        self._state = state
        now = time.monotonic()
        if self.live:
            share = state.done / state.total if state.total else 1.0
            filled = int(BAR_WIDTH * share)
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            self.stream.write(f"\r{state.what} [{bar}] {describe(state)}\033[K")
            self._drawn = True
        elif now - self._last >= PLAIN_EVERY or not self._last or state.done == state.total:
            self.stream.write(f"orgkit: {state.what} {describe(state)}\n")
            self._last = now
        self.stream.flush()

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False

"""A per-call deadline for the servers: a call's client hears back in time, whatever the call does.

`serve` and MCP run each call under `within(seconds)`: the call runs in a
worker thread and the client gets a one-line error when it is not done in
time. Work that can be stopped stops at the deadline (ripgrep asks
`remaining()` and is killed then); the rest finishes in the background and
its result is dropped. The command line has no deadline: the user waits, or
presses Ctrl-C.
"""

from __future__ import annotations

import contextvars
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from .errors import Unavailable

T = TypeVar("T")
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("orgkit_deadline", default=None)


class DeadlinePassed(Unavailable):
    """A call ran past its deadline (serve.call_timeout)."""


def remaining() -> float | None:
    """Seconds left to this call (at least 0), or None when it has no deadline."""
    end = _DEADLINE.get()
    return None if end is None else max(0.0, end - time.monotonic())


@contextmanager
def until(seconds: float) -> Iterator[None]:
    """Work in this block (and in threads started from its context) has `seconds` left."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def within(seconds: float, what: str, work: Callable[[], T]) -> T:
    """`work()`'s result, or DeadlinePassed once `seconds` have passed (the work goes on in the background)."""
    box: dict[str, object] = {}

    def run() -> None:
        with until(seconds):
            try:
                box["result"] = work()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as it is
                box["error"] = exc

    worker = threading.Thread(target=contextvars.copy_context().run, args=(run,), name="orgkit-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise DeadlinePassed(f"{what} took longer than {seconds:g} s (serve.call_timeout); its result is dropped")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]

"""How often one token may call what costs the team server most: a token bucket per token and kind.

A token's deposits (each a note written and a librarian run queued) and its
expensive reads (search, context, recall, scan: a model, an index pass or a
pattern over every headline) are limited to `http.deposits_per_minute` and
`http.reads_per_minute`. A bucket holds ten seconds' worth and refills at the
rate; a call that finds it empty is refused with `TooMany`, which every surface
answers as the table says (the team server: 429 with Retry-After), and nothing
is done. The buckets live in each worker process: a server of N workers gives
each worker 1/N of the rate, and since every call comes on a connection of its
own and a busy worker accepts fewer, a token's calls spread over the workers.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Mapping

from ..errors import TooMany

KINDS = {"deposit": "http.deposits_per_minute", "read": "http.reads_per_minute"}
BURST_SECONDS = 10.0  # how much a full bucket holds, in seconds of its rate


class RateLimits:
    """The buckets of one worker process, per (token, kind)."""

    def __init__(self, per_minute: Mapping[str, float], workers: int = 1) -> None:
        self.rates = {kind: per_minute[kind] / 60.0 / max(1, workers) for kind in KINDS}
        self.capacity = {kind: max(1.0, rate * BURST_SECONDS) for kind, rate in self.rates.items()}
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # (token, kind) -> (level, at)

    @classmethod
    def from_config(cls, cfg: Any, workers: int = 1) -> "RateLimits":
        return cls({kind: cfg[key] for kind, key in KINDS.items()}, workers)

    def take(self, kind: str | None, who: str) -> None:
        """Spend one call of `kind` for `who`; `TooMany` (nothing spent) when the bucket is empty."""
        if kind is None:
            return
        rate, capacity = self.rates[kind], self.capacity[kind]
        now = time.monotonic()
        with self._lock:
            level, at = self._buckets.get((who, kind), (capacity, now))
            level = min(capacity, level + (now - at) * rate)
            if level < 1.0:
                self._buckets[(who, kind)] = (level, now)
                wait = math.ceil((1.0 - level) / rate)
                raise TooMany(f"too many {kind} calls for this token (limit {KINDS[kind]}); "
                              f"try again in {wait} s", wait)
            self._buckets[(who, kind)] = (level - 1.0, now)

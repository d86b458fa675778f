"""Verdict events: a reviewer's accept or reject of quotes as claims, kept per schema.

Verdicts come in bulk (`orgkit extract learn`), a file at a time: either every
verdict of a file is stored or none is. So the schema's file is rewritten whole
(the old records, then the new ones not yet recorded, by event ID) and put in
place in one rename, under a lock beside it that serialises writers. Primary
data: orgkit never deletes it; `orgkit evolve` fits the extractor's scorer on it.
"""

from __future__ import annotations

import json

from ..config import Config
from ..files import file_lock, made_dir, replace_file
from .events import Event
from .jsonl import read_records
from .paths import feedback_dir, verdicts_path


def record_verdicts(config: Config, schema: str, events: list[Event]) -> list[Event]:
    """Store `events` (verdicts under `schema`) all at once; returns those new to the record."""
    path = verdicts_path(config, schema)
    made_dir(path.parent)
    with file_lock(path.with_name(f".{path.name}.lock"), mode=0o644):
        old = read_records(path)
        seen = {r.get("id") for r in old}
        new = []
        for event in events:
            if event.id not in seen:
                seen.add(event.id)
                new.append(event.to_json())
        if new:
            payload = b"".join(json.dumps(r, ensure_ascii=False, sort_keys=True).encode() + b"\n"
                               for r in old + new)
            replace_file(path, payload)
    return [Event.from_json(r) for r in new]


def load_verdicts(config: Config, schema: str) -> list[Event]:
    """The verdict events recorded under `schema`, oldest first."""
    out = []
    for record in read_records(verdicts_path(config, schema)):
        try:
            event = Event.from_json(record)
        except TypeError:
            continue
        if event.source == "verdict":
            out.append(event)
    return out


def verdict_counts(config: Config) -> list[dict]:
    """Per schema with verdicts: how many accept and reject (what `orgkit guidance` shows)."""
    folder = feedback_dir(config) / "verdicts"
    rows = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        events = load_verdicts(config, path.stem)
        rows.append({"schema": path.stem, "verdicts": len(events),
                     "accept": sum(e.action == "accept" for e in events),
                     "reject": sum(e.action == "reject" for e in events),
                     "sources": len({e.item_id for e in events})})
    return rows

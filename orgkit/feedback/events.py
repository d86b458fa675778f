"""Correction events: the labels the feedback loop learns from.

Four kinds (`source`): `override` (a field of a generated note edited or
deleted), `link_change` (a link added to or removed from a generated note),
`review` (a proposal accepted, edited or rejected, or such a decision undone)
and `verdict` (a quote of a source accepted or rejected as a claim of a schema's
dimension, given in bulk: `orgkit extract learn`; kept per schema, `verdicts.py`). Each event keeps what was
true when it happened: extractor (the generating role), schema and version,
node type, field, source document, before and after values, time. They are
appended to `events.jsonl` in the data dir and are unique by ID, computed as:

- override:    sha256(schema_version + source_path + node_id + field + action
                      + normalized(before) + normalized(after))
- link_change: sha256(source_path + source_node_id + action + target_slug + target_node_id)
- review:      sha256(source_path + item_id + action + canonical_node_id + undone)
- verdict:     sha256(schema + item_id + field + action + quote), item_id being the
               source's content hash and field the dimension's tag

(`+` is plain string concatenation, UTF-8 encoded, hex digest; `normalized` is
`fields.normalized`; a missing part is the empty string; `undone` is empty
until the item's first `undo` event, then "undone N" after N of them, so a
decision made again after an undo is a new event), so the same edit seen by
two `index` runs is one event.

An `undo` review event cancels the latest earlier decision on the same item
that is not cancelled yet: `load_events` leaves out both, so what was undone
teaches nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, fields as dc_fields

from ..config import Config
from ..errors import OrgkitError
from .fields import normalized
from .generated import now
from .jsonl import append_records, read_records
from .paths import events_path

SOURCES = ("override", "link_change", "review", "verdict")
ACTIONS = {"override": ("edit", "delete"), "link_change": ("add", "remove"),
           "review": ("accept", "edit", "reject", "undo"), "verdict": ("accept", "reject")}


@dataclass(frozen=True)
class Event:
    """One correction, as it was at event time."""

    id: str
    source: str
    extractor: str
    node_type: str
    field: str
    action: str
    source_path: str
    before: str | list[str] | None
    after: str | list[str] | None
    schema: str = ""
    schema_version: str = ""
    node_id: str = ""
    item_id: str = ""
    target_slug: str = ""
    target_node_id: str = ""
    time: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Event":
        known = {f.name for f in dc_fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def sha256(*parts: str) -> str:
    return hashlib.sha256("".join(parts).encode("utf-8")).hexdigest()


def override_id(schema_version: str, source_path: str, node_id: str, field: str, action: str,
                before, after) -> str:
    return sha256(schema_version, source_path, node_id, field, action, normalized(before), normalized(after))


def link_change_id(source_path: str, source_node_id: str, action: str, target_slug: str,
                   target_node_id: str) -> str:
    return sha256(source_path, source_node_id, action, target_slug, target_node_id)


def review_id(source_path: str, item_id: str, action: str, canonical_node_id: str, undone: int = 0) -> str:
    return sha256(source_path, item_id, action, canonical_node_id, f"undone {undone}" if undone else "")


def verdict_id(schema: str, source_sha256: str, tag: str, action: str, quote: str) -> str:
    return sha256(schema, source_sha256, tag, action, quote)


def append_events(config: Config, events: list[Event]) -> list[Event]:
    """Append the events not yet recorded (by ID); returns those written."""
    written = append_records(events_path(config), [e.to_json() for e in events], unique=lambda r: r.get("id", ""))
    return [Event.from_json(r) for r in written]


def load_events(config: Config) -> list[Event]:
    """Every recorded event that stands, oldest first: records that do not fit the schema are
    skipped, and each `undo` review event is left out with the decision it cancels (and, for
    an accepted new note, the deletion of that note the undo itself made)."""
    out: list[Event | None] = []
    standing: dict[str, list[int]] = {}  # item ID -> positions of its decisions not cancelled
    retracted: set[tuple[str, str]] = set()  # (extractor, node ID) of new notes an undo removed
    for data in read_records(events_path(config)):
        try:
            event = Event.from_json(data)
        except TypeError:
            continue
        if event.source not in SOURCES:
            continue
        if event.source == "review" and event.action == "undo":
            if standing.get(event.item_id):
                at = standing[event.item_id].pop()
                cancelled, out[at] = out[at], None
                if cancelled is not None and cancelled.node_type == "note" and cancelled.action != "reject" \
                        and cancelled.node_id:
                    retracted.add((cancelled.extractor, cancelled.node_id))
            continue
        if event.source == "review":
            standing.setdefault(event.item_id, []).append(len(out))
        out.append(event)
    return [e for e in out if e is not None and not (
        e.source == "override" and e.field == "note" and e.action == "delete"
        and (e.extractor, e.node_id) in retracted)]


def _undos(config: Config, item_id: str) -> int:
    """How many `undo` events the item has (its decisions' round)."""
    return sum(1 for r in read_records(events_path(config))
               if r.get("source") == "review" and r.get("action") == "undo" and r.get("item_id") == item_id)


def record_review(config: Config, *, item_id: str, action: str, source_path: str,
                  canonical_node_id: str = "", extractor: str = "librarian", node_type: str = "note",
                  field: str = "proposal", before: str | None = None, after: str | None = None,
                  schema: str = "", schema_version: str = "") -> Event | None:
    """Record a review decision on a proposal; returns the event, None when already recorded.

    `action` is accept, edit or reject, or undo (which cancels the item's latest
    decision); `canonical_node_id` is the note the proposal became (empty for a
    rejection); `before` is the proposal as generated and `after` what the
    reviewer kept.
    """
    if action not in ACTIONS["review"]:
        raise OrgkitError(f"review action must be one of {', '.join(ACTIONS['review'])}, not {action!r}")
    undone = _undos(config, item_id)
    event = Event(id=review_id(source_path, item_id, action, canonical_node_id, undone), source="review",
                  extractor=extractor, node_type=node_type, field=field, action=action,
                  source_path=source_path, before=before, after=after, schema=schema,
                  schema_version=schema_version, node_id=canonical_node_id, item_id=item_id, time=now())
    written = append_events(config, [event])
    return written[0] if written else None

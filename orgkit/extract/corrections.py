"""What the recorded corrections of claim notes teach the offline extractor, without a model.

A model reads the guidance file; the offline extractor cannot, so it takes
from the same events what it can apply exactly: a dimension whose claims people
delete at least `feedback.min_events` times, and at least half of those the runs
wrote, is demoted (its best claim only); an opening of two words that the
deleted claims share at least `feedback.min_events` times ("good because") is a
sentence shape the extractor no longer writes. Used only with
`--use-extraction-feedback`, so without it the output does not change.
"""

from __future__ import annotations

from collections import Counter

from ..config import Config
from ..feedback.events import load_events
from .offline import Demotions, shape
from .store import RunStore, list_runs


def claim_dimensions(config: Config) -> dict[str, str]:
    """Every claim ID the runs wrote (kept, vanished or deleted since) -> its dimension."""
    out: dict[str, str] = {}
    for name in list_runs(config.data_dir):
        store = RunStore.open(config.data_dir, name)
        for index, _ in enumerate(store.read("run.json")["sources"]):
            written = store.read(f"claims-{index}.json") or {}
            for claim in (*written.get("claims", []), *written.get("deleted", []), *written.get("vanished", [])):
                out[claim["claim_id"]] = claim["dimension"]
    return out


def deleted_claims(config: Config) -> list:
    """The deletion events of claim notes the extractor wrote, oldest first."""
    return [e for e in load_events(config) if e.source == "override" and e.extractor == "extractor"
            and e.node_type == "claim" and e.field == "note" and e.action == "delete"]


def demotions(config: Config) -> Demotions:
    """The dimensions and sentence shapes people keep deleting."""
    minimum = config["feedback.min_events"]
    dims = claim_dimensions(config)
    deleted = deleted_claims(config)
    written = Counter(dims.values())
    gone = Counter(dims[e.node_id] for e in deleted if e.node_id in dims)
    shapes = Counter(shape(str(e.before or "")) for e in deleted)
    return Demotions(
        dimensions=frozenset(d for d, n in gone.items() if n >= minimum and 2 * n >= written[d]),
        shapes=frozenset(s for s, n in shapes.items() if len(s) == 2 and n >= minimum))

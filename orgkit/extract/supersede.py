"""Re-extraction: a new run over a source an earlier run of the same schema extracted.

The new run supersedes the earlier one instead of adding a second set of notes
beside it. A claim whose dimension and quote text the earlier run already had
keeps its note and IDs (the person's edits to it survive; a quote that moved
is re-anchored in place); a claim the person deleted is not written again; a
new claim gets a new note; an earlier claim the new run no longer finds is
marked `:VANISHED: RUN` in its note and listed apart on the new hub, which
links the earlier run's hub.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import OrgkitError
from ..org.write import atomic_write
from ..locator import note_ids
from .audit import set_props, read_quote_note, rewrite_quote
from .store import RunStore, claim_note, list_runs, refused_claim


def earlier_source(data_dir: Path, schema_name: str, path: str, sha256: str, run: str) -> dict | None:
    """The latest earlier run's entry for the same source (same original path, or same content)
    under the same schema: {run, index, hub_id, hub_note}; None when there is none."""
    for name in reversed(list_runs(data_dir)):
        if name == run:
            continue
        try:
            info = RunStore.open(data_dir, name).read("run.json") or {}
        except OrgkitError:  # a malformed run (it may have come with the notes) supersedes nothing
            continue
        if info.get("schema", {}).get("name") != schema_name:
            continue
        for index, source in enumerate(info.get("sources", [])):
            if source.get("path") == path or source.get("sha256") == sha256:
                return {"run": name, "index": index, "hub_id": source["hub_id"], "hub_note": source["hub_note"]}
    return None


def earlier_claims(notes: Path, data_dir: Path, earlier: dict, notices: list[str]) -> list[dict]:
    """The claims the earlier run wrote for the source, as it recorded them (kept ones included, and
    those a person deleted since, so that they are not written again); a claim whose recorded file
    lies outside the notes is left out, with a line in `notices`."""
    store = RunStore.open(data_dir, earlier["run"])
    written = store.read(f"claims-{earlier['index']}.json") or {}
    claims = [c for c in written.get("claims", []) + written.get("deleted", []) if isinstance(c, dict)]
    notices += [refused_claim(earlier["run"], c) for c in claims if claim_note(notes, c) is None]
    return [c for c in claims if claim_note(notes, c) is not None]


def key(claim: dict) -> tuple[str, str]:
    """What makes two runs' claims the same claim: the dimension and the quoted text."""
    return claim["dimension"], " ".join(claim["quote"].split())


def keep(notes: Path, old: dict, cand: dict, source: dict, tag: str) -> dict | None:
    """The earlier claim `old` carried into the new run for candidate `cand`, its quote re-anchored
    when it moved; None when the person deleted its note (a deletion is a correction too)."""
    path = notes / old["claim_file"]
    note = read_quote_note(path, old["quote_id"])
    if note is None:
        return None
    claim = {**old, "start": cand["start"], "end": cand["end"], "quote": cand["quote"], "stale": False}
    if (note["start"], note["end"], note["sha256"]) != (cand["start"], cand["end"], source["sha256"]) or note["stale"]:
        rewrite_quote(notes, path, note, source, claim, tag, stale=False)
    return claim


def mark_vanished(notes: Path, old: dict, run: str) -> bool:
    """Mark an earlier claim the new run did not find (`:VANISHED: RUN`); False when its note is gone."""
    path = notes / old["claim_file"]
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    new = set_props(text, {"VANISHED": run})
    if new != text:
        atomic_write(path, new.encode("utf-8"), expected=text.encode("utf-8"), ids=note_ids(notes))
    return True

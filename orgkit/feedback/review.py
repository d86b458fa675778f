"""Feedback from review: the librarian's accepted new notes, and each reviewer's decision.

Called by the review resolver once a batch of decisions is applied. A `new`
proposal accepted (by a person or by auto-admission) writes a note the librarian
generated: it is recorded like an extraction note, so later edits to it become
override events. Each decision a person makes (accept, edit, reject) becomes a
`review` event for the librarian, with the proposal's kind as node type (`note`
for new notes) and its editable field: before is the proposal as the librarian
wrote it, after what the reviewer kept (nothing for a rejection). `admit`
decisions are about the depositor's own note, not the librarian's, and are left out.
Undoing a batch records an `undo` event per decision a person made in it, which
cancels that decision (`events.load_events`), so `evolve` no longer learns from it.
"""

from __future__ import annotations

from ..config import Config
from .events import record_review
from .generated import Generator, record_generated

LIBRARIAN = Generator("librarian")
EDITABLE = {"new": "body", "append": "text", "link": "description", "tag": "tag"}
DECISIONS = {"accept", "edit", "reject"}


def node_type(kind: str) -> str:
    """The node type feedback files a proposal kind under."""
    return "note" if kind == "new" else kind


def record_decisions(config: Config, decided: list[dict], *, human: bool) -> None:
    """`decided`: per decision, {action, proposal, kind, target, deposit_path, before, after, files}
    (`before`/`after` the payloads, `files` each written file's text after the batch)."""
    for item in decided:
        kind = item["kind"]
        if kind == "admit":
            continue
        node_id = (item["after"] or item["before"]).get("id", "") if kind == "new" else item["target"] or ""
        if kind == "new" and item["action"] != "reject":
            for rel, text in item["files"].items():
                if text is not None and node_id and node_id in text:
                    record_generated(config, file=rel, node_id=node_id, node_type="note", generator=LIBRARIAN,
                                     source_path=item["deposit_path"], text=text)
        if human and item["action"] in DECISIONS:
            field = EDITABLE.get(kind, "proposal")
            record_review(config, item_id=item["proposal"], action=item["action"],
                          source_path=item["deposit_path"], canonical_node_id=node_id, extractor="librarian",
                          node_type=node_type(kind), field=field, before=_text(item["before"].get(field)),
                          after=None if item["action"] == "reject" else _text(item["after"].get(field)))


def record_undo(config: Config, undone: list[dict]) -> None:
    """`undone`: per decision a person made in an undone batch, {proposal, kind, target,
    deposit_path, payload} (`payload` as the decision left it)."""
    for item in undone:
        kind = item["kind"]
        if kind == "admit":
            continue
        node_id = item["payload"].get("id", "") if kind == "new" else item["target"] or ""
        record_review(config, item_id=item["proposal"], action="undo", source_path=item["deposit_path"],
                      canonical_node_id=node_id, extractor="librarian", node_type=node_type(kind),
                      field=EDITABLE.get(kind, "proposal"))


def _text(value) -> str | None:
    return None if value is None else str(value)

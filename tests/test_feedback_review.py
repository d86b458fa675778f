"""Review decisions and librarian notes feed the loop; the librarian's prompt takes guidance on request."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memory_notes import FINDING, NOWEB, TANGLE, notes_with_loopback_model

from orgkit import config
from orgkit.feedback.events import load_events
from orgkit.feedback.generated import latest_records
from orgkit.llm import persona

PROPOSALS = {"proposals": [
    {"kind": "link", "dest": TANGLE, "description": "how tangling works", "chunks": [1]},
    {"kind": "tag", "tag": "literate", "chunks": [1, 2]},
    {"kind": "append", "target": NOWEB, "text": "Prefer noweb over :var when tangling.", "chunks": [2]},
    {"kind": "new", "title": "Why var is refused", "body": "Evaluating :var would run code.", "chunks": [1]},
]}
GUIDANCE = ("* Extractor: librarian\n** Node Type: link\n- Describe a link by what the target explains.\n"
            "* Extractor: extractor\n** Node Type: claim\n- Not for the librarian.\n")


@pytest.fixture
def notes(tmp_path: Path, tiny_model, llm_server, monkeypatch) -> Path:
    return notes_with_loopback_model(tmp_path / "notes", llm_server, monkeypatch, clear=("ORGKIT_LLM", "ORGKIT_USE_EXTRACTION_FEEDBACK"))


def _ok(result) -> dict | list:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _deposit(cli, notes: Path, *extra: str) -> dict:
    return _ok(cli("deposit", "--notes", str(notes), "--title", "Tangling and var", "--body", FINDING,
                   "--json", *extra))


def _pending(cli, notes: Path) -> dict[str, dict]:
    return {p["kind"]: p for p in _ok(cli("review", "list", "--notes", str(notes), "--json"))}


def test_decisions_become_review_events_and_new_notes_generation_records(cli, notes: Path, llm_server) -> None:
    llm_server.reply(PROPOSALS)
    dep = _deposit(cli, notes)
    props = _pending(cli, notes)
    _ok(cli("review", "accept", props["link"]["id"], props["new"]["id"], "--notes", str(notes), "--json"))
    _ok(cli("review", "edit", props["append"]["id"], "--text", "Prefer noweb references over :var.",
            "--notes", str(notes), "--json"))
    _ok(cli("review", "reject", props["tag"]["id"], "--notes", str(notes), "--json"))
    cfg = config.load(notes, env={})
    events = {e.node_type: e for e in load_events(cfg)}
    assert {(t, e.source, e.extractor, e.field, e.action) for t, e in events.items()} == {
        ("link", "review", "librarian", "description", "accept"), ("note", "review", "librarian", "body", "accept"),
        ("append", "review", "librarian", "text", "edit"), ("tag", "review", "librarian", "tag", "reject")}
    edit = events["append"]
    assert (edit.before, edit.after, edit.source_path, edit.node_id) == (
        "Prefer noweb over :var when tangling.", "Prefer noweb references over :var.", dep["path"], NOWEB)
    assert edit.id == hashlib.sha256((dep["path"] + props["append"]["id"] + "edit" + NOWEB).encode()).hexdigest()
    assert events["tag"].after is None
    new_id = events["note"].node_id
    (record,) = [r for r in latest_records(cfg).values()]
    assert (record.node_id, record.node_type, record.generator.role) == (new_id, "note", "librarian")
    assert record.fields.title == "Why var is refused"
    # The person then rewrites the librarian's note: an override for the librarian.
    path = notes / record.file
    path.write_text(path.read_text(encoding="utf-8").replace("would run code.", "would run arbitrary code."),
                    encoding="utf-8")
    assert _ok(cli("index", "--notes", str(notes), "--no-embed", "--json"))["feedback_events"] == 1
    override = [e for e in load_events(cfg) if e.source == "override"]
    assert [(e.extractor, e.node_type, e.field, e.action) for e in override] == [("librarian", "note", "body", "edit")]


def test_librarian_prompt_takes_its_slice_only_on_request(cli, notes: Path, llm_server) -> None:
    (notes / "orgkit-data").mkdir(exist_ok=True)
    (notes / "orgkit-data" / "guidance.org").write_text(GUIDANCE, encoding="utf-8")
    llm_server.reply(PROPOSALS)
    _deposit(cli, notes)
    plain = llm_server.requests[-1]["messages"][0]["content"]
    assert plain == persona(config.load(notes, env={}), "librarian")
    result = cli("deposit", "--notes", str(notes), "--title", "Noweb and var", "--body", FINDING + "\nMore.",
                 "--use-extraction-feedback", "--json")
    _ok(result)
    guided = llm_server.requests[-1]["messages"][0]["content"]
    assert guided == plain + ("\n\nGuidance from people's corrections of earlier output (follow it where it "
                              "applies):\nFor link notes:\n- Describe a link by what the target explains.\n")


def test_undoing_an_accepted_new_note_teaches_nothing(cli, notes: Path, llm_server) -> None:
    """The undo cancels the accept, and the note's removal by the undo is no deletion by a person."""
    llm_server.reply(PROPOSALS)
    _deposit(cli, notes)
    props = _pending(cli, notes)
    batch = _ok(cli("review", "accept", props["new"]["id"], "--notes", str(notes), "--json"))["batch"]
    cfg = config.load(notes, env={})
    assert [(e.node_type, e.action) for e in load_events(cfg)] == [("note", "accept")]
    _ok(cli("review", "undo", batch, "--notes", str(notes), "--json"))
    assert _ok(cli("index", "--notes", str(notes), "--no-embed", "--json"))["feedback_events"] == 1  # the deletion
    assert load_events(cfg) == []

"""Correction events: recorded from generated notes by `orgkit index`, unique by ID."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from feedback_notes import GENERATOR, claim_text, edit, generate_claims

from orgkit.feedback.events import Event, load_events, record_review
from orgkit.feedback.fields import fields_of_text, normalized
from orgkit.feedback.generated import latest_records
from orgkit.feedback.jsonl import append_records, read_records
from orgkit.feedback.observe import observe
from orgkit.feedback.paths import events_path


def _index(cli, notes: Path) -> dict:
    result = cli("index", "--notes", str(notes), "--no-embed", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_generation_record_holds_every_field(tmp_path):
    cfg = generate_claims(tmp_path / "notes", 1)
    record = latest_records(cfg)["claim-0"]
    assert record.node_type == "claim" and record.generator == GENERATOR
    assert record.source_path == "docs/doc-0.txt" and record.file == "claims/claim-0.org"
    assert record.fields.title == "Claim 0"
    assert record.fields.body == "The study found effect 0 in most cases.\n\nFrom [[id:hub-0][Document 0]]."
    assert record.fields.tags == ("claim",) and record.fields.links == ("id:hub-0",)


def test_body_leaves_out_drawers_keywords_and_child_nodes():
    text = ("* Parent :t:\nSCHEDULED: <2026-01-01>\n:PROPERTIES:\n:ID: p\n:END:\nOwn text.\n"
            "** Child\n:PROPERTIES:\n:ID: c\n:END:\nChild text.\n** Plain heading\nStill the parent's.\n")
    parent = fields_of_text(text, "x.org", "p")
    assert parent.body == "Own text.\n** Plain heading\nStill the parent's."
    assert fields_of_text(text, "x.org", "c").body == "Child text."
    assert fields_of_text(text, "x.org", "missing") is None


def test_normalized_is_documented_form():
    assert normalized("  A\u0301 b\n\n\tc  ") == "\u00c1 b c"
    assert normalized(["b", "a", "b", ""]) == "a\nb"
    assert normalized(None) == ""


def test_untouched_notes_make_no_events_and_no_record_costs_nothing(tmp_path, cli):
    cfg = generate_claims(tmp_path / "notes")
    assert _index(cli, cfg.notes)["feedback_events"] == 0
    assert not events_path(cfg).exists() or load_events(cfg) == []
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.org").write_text("#+title: A\n", encoding="utf-8")
    assert _index(cli, plain)["feedback_events"] == 0
    assert not (plain / "orgkit-data").exists()


def test_the_same_edit_seen_by_two_index_runs_is_one_event(tmp_path, cli):
    cfg = generate_claims(tmp_path / "notes")
    edit(cfg.notes / "claims/claim-0.org", "in most cases.", "in 7 of 12 trials.")
    assert _index(cli, cfg.notes)["feedback_events"] == 1
    assert _index(cli, cfg.notes)["feedback_events"] == 0
    (event,) = load_events(cfg)
    assert (event.source, event.field, event.action) == ("override", "body", "edit")
    assert (event.extractor, event.node_type, event.schema, event.schema_version) == ("extractor", "claim", "paper", "1")
    assert event.source_path == "docs/doc-0.txt" and event.node_id == "claim-0"
    assert event.after.startswith("The study found effect 0 in 7 of 12 trials.")
    expected = hashlib.sha256(("1" + "docs/doc-0.txt" + "claim-0" + "body" + "edit"
                               + normalized(event.before) + normalized(event.after)).encode()).hexdigest()
    assert event.id == expected


def test_refilling_a_paragraph_is_not_an_edit(tmp_path, cli):
    cfg = generate_claims(tmp_path / "notes", 1)
    edit(cfg.notes / "claims/claim-0.org", "effect 0 in most", "effect 0\nin  most")
    assert _index(cli, cfg.notes)["feedback_events"] == 0


def test_deleted_field_and_deleted_note(tmp_path, cli):
    cfg = generate_claims(tmp_path / "notes")
    edit(cfg.notes / "claims/claim-0.org", "#+filetags: :claim:\n", "")
    (cfg.notes / "claims/claim-1.org").unlink()
    _index(cli, cfg.notes)
    found = {(e.node_id, e.field, e.action) for e in load_events(cfg)}
    assert found == {("claim-0", "tags", "delete"), ("claim-1", "note", "delete")}


def test_an_unreadable_note_is_not_taken_for_deleted(tmp_path, cli):
    cfg = generate_claims(tmp_path / "notes", 1)
    path = cfg.notes / "claims/claim-0.org"
    path.write_bytes(path.read_bytes() + b"\xff\xfe binary")
    result = cli("index", "--notes", str(cfg.notes), "--no-embed", "--json")
    assert json.loads(result.stdout)["feedback_events"] == 0


def test_link_changes_and_a_retitled_target_make_no_second_event(tmp_path, cli):
    cfg = generate_claims(tmp_path / "notes")
    edit(cfg.notes / "claims/claim-0.org", "From [[id:hub-0][Document 0]].",
         "From [[id:hub-1][Document 1]] and https://example.org/paper.")
    assert _index(cli, cfg.notes)["feedback_events"] == 4  # the body changed too
    events = {(e.action, e.target_node_id or e.after or e.before): e for e in load_events(cfg)
              if e.source == "link_change"}
    assert len(events) == 3
    added = events[("add", "hub-1")]
    assert added.source == "link_change" and added.target_slug == "document_1"
    assert added.id == hashlib.sha256(("docs/doc-0.txt" + "claim-0" + "add" + "document_1" + "hub-1").encode()).hexdigest()
    assert events[("add", "https://example.org/paper")].target_slug == "https_example_org_paper"
    assert events[("remove", "hub-0")].target_slug == "document_0"
    edit(cfg.notes / "hub-1.org", "#+title: Document 1", "#+title: Renamed document")
    assert _index(cli, cfg.notes)["feedback_events"] == 0


def test_a_moved_note_is_still_compared(tmp_path, cli):
    cfg = generate_claims(tmp_path / "notes", 1)
    (cfg.notes / "claims/claim-0.org").rename(cfg.notes / "moved.org")
    edit(cfg.notes / "moved.org", "#+title: Claim 0", "#+title: Effect 0 holds in most cases")
    _index(cli, cfg.notes)
    (event,) = load_events(cfg)
    assert (event.field, event.action, event.before, event.after) == (
        "title", "edit", "Claim 0", "Effect 0 holds in most cases")


def test_event_schema_round_trip(tmp_path):
    cfg = generate_claims(tmp_path / "notes", 1)
    edit(cfg.notes / "claims/claim-0.org", "in most cases.", "in every case.")
    (event,) = observe(cfg).events
    (stored,) = read_records(events_path(cfg))
    assert Event.from_json(stored) == event
    assert Event.from_json(json.loads(json.dumps(event.to_json()))) == event
    assert set(stored) >= {"id", "source", "extractor", "node_type", "field", "source_path", "before", "after",
                           "schema_version", "time", "action"}


def test_review_events_are_unique_by_their_id(tmp_path):
    cfg = generate_claims(tmp_path / "notes", 0)
    first = record_review(cfg, item_id="item-1", action="edit", source_path="inbox/a.org",
                          canonical_node_id="n-1", before="Draft", after="Kept text")
    assert first.id == hashlib.sha256(("inbox/a.org" + "item-1" + "edit" + "n-1").encode()).hexdigest()
    assert record_review(cfg, item_id="item-1", action="edit", source_path="inbox/a.org",
                         canonical_node_id="n-1", before="Draft", after="Kept text") is None
    assert [e.source for e in load_events(cfg)] == ["review"]


def test_a_torn_last_line_is_ignored_then_repaired(tmp_path):
    path = tmp_path / "events.jsonl"
    append_records(path, [{"id": "a"}], unique=lambda r: r["id"])
    with path.open("ab") as out:
        out.write(b'{"id": "b", "half')  # a run killed in the middle of a write
    assert read_records(path) == [{"id": "a"}]
    assert append_records(path, [{"id": "a"}, {"id": "c"}], unique=lambda r: r["id"]) == [{"id": "c"}]
    assert path.read_bytes() == b'{"id": "a"}\n{"id": "c"}\n'


def test_claim_text_helper_matches_generated_fields():
    fields = fields_of_text(claim_text("x", "T", "Body."), "x.org", "x")
    assert (fields.title, fields.body, fields.tags) == ("T", "Body.", ("claim",))


def test_a_killed_writer_leaves_complete_records(tmp_path):
    """A process killed while appending big records: readers see whole records, the next append repairs."""
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "events.jsonl"
    script = ("import sys\nfrom pathlib import Path\nfrom orgkit.feedback.jsonl import append_records\n"
              "i = 0\nwhile True:\n"
              "    append_records(Path(sys.argv[1]), [{'id': str(i), 'pad': 'x' * 300000}], unique=lambda r: r['id'])\n"
              "    i += 1\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)])
    try:
        deadline = time.monotonic() + 20
        while (not path.exists() or path.stat().st_size < 2_000_000) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    records = read_records(path)
    assert records and [r["id"] for r in records] == [str(i) for i in range(len(records))]
    append_records(path, [{"id": "after"}], unique=lambda r: r["id"])
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])
    assert read_records(path)[-1] == {"id": "after"}


def test_one_link_added_to_a_claim_is_one_event(tmp_path, cli):
    """A link added on a line of its own, or around words already there, is a link change and
    not a body edit as well; words added with it are still a body edit."""
    cfg = generate_claims(tmp_path / "notes", 3)
    claims = cfg.notes / "claims"
    edit(claims / "claim-0.org", "From [[id:hub-0][Document 0]].",
         "From [[id:hub-0][Document 0]].\n- [[id:hub-1][Document 1]]")
    edit(claims / "claim-1.org", "in most cases.", "in [[id:hub-2][most cases]].")
    edit(claims / "claim-2.org", "in most cases.", "in most cases, see [[id:hub-1][Document 1]].")
    _index(cli, cfg.notes)
    found = sorted((e.node_id, e.source, e.action) for e in load_events(cfg))
    assert found == [("claim-0", "link_change", "add"), ("claim-1", "link_change", "add"),
                     ("claim-2", "link_change", "add"), ("claim-2", "override", "edit")]

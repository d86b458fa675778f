"""The offline librarian's judgement: duplicates, off-topic deposits, tags, guidance; undo and decide again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memory_notes import FINDING, NOWEB, TANGLE, make_notes, rows

from orgkit import config
from orgkit.feedback.events import load_events, record_review

NOWEB_BODY = ("Noweb references <<name>> expand named code blocks inside other blocks when\n"
              "tangling; :noweb-ref collects blocks under one name.")


@pytest.fixture
def notes(tmp_path: Path, tiny_model, monkeypatch) -> Path:
    for key in list(os.environ):
        if key.startswith("ORGKIT_LLM") or key == "ORGKIT_USE_EXTRACTION_FEEDBACK":
            monkeypatch.delenv(key)
    monkeypatch.setenv("USER", "reviewer")
    return make_notes(tmp_path / "notes")


def ok(result) -> dict | list:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def deposit(cli, notes: Path, title: str, body: str, *extra: str) -> dict:
    return ok(cli("deposit", "--notes", str(notes), "--title", title, "--body", body, "--json", *extra))


def proposals_of(notes: Path, deposit_id: str) -> list[dict]:
    return rows(notes, "SELECT * FROM proposals WHERE deposit = ? ORDER BY seq", (deposit_id,))


def test_a_deposit_repeating_a_note_is_a_duplicate_never_admitted_by_policy(cli, notes: Path, user_config) -> None:
    user_config('[admission.""]\nagent = "auto"\n')
    dep = deposit(cli, notes, "Noweb, again", NOWEB_BODY)
    found = proposals_of(notes, dep["id"])
    twin = next(p for p in found if p["kind"] == "duplicate-of")
    assert twin["payload"]["dest"] == NOWEB and twin["payload"]["overlap"] >= 0.9 and twin["chunks"]
    assert all(p["payload"].get("dest") != NOWEB for p in found if p["kind"] == "link")
    assert all(p["status"] == "pending" for p in found)  # nothing admitted by the auto policy
    admit = next(p for p in found if p["kind"] == "admit")
    assert "repeats note " + NOWEB in (admit["reason"] or "")
    listed = ok(cli("review", "list", "--notes", str(notes), "--json"))
    assert any(p["kind"] == "duplicate-of" and p["payload"]["dest"] == NOWEB for p in listed)


def test_an_off_topic_deposit_gets_its_admit_and_the_reason_only(cli, notes: Path) -> None:
    dep = deposit(cli, notes, "Sourdough baking",
                  "Feed the sourdough starter flour and water daily; proof the loaf overnight in the fridge and "
                  "bake it in a preheated Dutch oven.")
    found = proposals_of(notes, dep["id"])
    assert [p["kind"] for p in found] == ["admit"]
    assert found[0]["reason"].startswith("a new note, linked to nothing: no other note is close enough (best match ")


def test_links_rest_on_matching_chunks_and_tags_come_from_the_linked_notes(cli, notes: Path) -> None:
    dep = deposit(cli, notes, "Tangling and var", FINDING)
    found = [p for p in proposals_of(notes, dep["id"]) if p["status"] == "pending"]
    links = {p["payload"]["dest"]: p["chunks"] for p in found if p["kind"] == "link"}
    assert set(links) == {TANGLE, NOWEB} and 2 in links[NOWEB]  # the chunk naming noweb
    assert sorted(p["payload"]["tag"] for p in found if p["kind"] == "tag") == ["literate", "tools"]


def test_undo_returns_proposals_to_pending_and_cancels_the_feedback(cli, notes: Path) -> None:
    dep = deposit(cli, notes, "Tangling and var", FINDING)
    found = proposals_of(notes, dep["id"])
    link = next(p for p in found if p["kind"] == "link")
    admit = next(p for p in found if p["kind"] == "admit")
    cfg = config.load(notes)
    batch = ok(cli("review", "accept", link["id"], admit["id"], "--notes", str(notes), "--json"))["batch"]
    assert [e.action for e in load_events(cfg)] == ["accept"]
    ok(cli("review", "undo", batch, "--notes", str(notes), "--json"))
    assert {p["id"]: p["status"] for p in proposals_of(notes, dep["id"])}[link["id"]] == "pending"
    assert load_events(cfg) == []  # the undone accept teaches nothing
    ok(cli("review", "accept", link["id"], "--notes", str(notes), "--json"))  # decided again
    assert [(e.action, e.item_id) for e in load_events(cfg)] == [("accept", link["id"])]
    assert f"[[id:{link['payload']['dest']}]" in (notes / dep["path"]).read_text()
    raw = (notes / "orgkit-data" / "feedback" / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["action"] for line in raw] == ["accept", "undo", "accept"]


def test_an_undone_deposit_can_be_rejected_and_leaves_the_notes(cli, notes: Path) -> None:
    dep = deposit(cli, notes, "Tangling and var", FINDING)
    found = proposals_of(notes, dep["id"])
    batch = ok(cli("review", "accept", *[p["id"] for p in found], "--notes", str(notes), "--json"))["batch"]
    ok(cli("review", "undo", batch, "--notes", str(notes), "--json"))
    admit = next(p for p in found if p["kind"] == "admit")
    ok(cli("review", "reject", admit["id"], "--notes", str(notes), "--json"))
    assert not (notes / dep["path"]).exists()


def test_guidance_demotes_link_targets_people_keep_rejecting_and_off_changes_nothing(cli, notes: Path) -> None:
    cfg = config.load(notes)
    for n in range(3):
        record_review(cfg, item_id=f"old-{n}", action="reject", source_path="deposits/x.org",
                      node_type="link", field="description", before="Tangling code blocks")

    def alone(*flag: str) -> dict:
        """A deposit, then its note removed (its admit rejected), so the next one does not see it."""
        dep = deposit(cli, notes, "Tangling and var", FINDING, *flag)
        admit = next(p for p in proposals_of(notes, dep["id"]) if p["kind"] == "admit")
        ok(cli("review", "reject", admit["id"], "--notes", str(notes), "--json"))
        return dep

    def made(dep: dict) -> list[tuple]:
        return [(p["kind"], json.dumps(p["payload"], sort_keys=True), p["chunks"])
                for p in proposals_of(notes, dep["id"]) if p["kind"] != "admit"]

    off, on, again = alone(), alone("--use-extraction-feedback"), alone()
    assert made(off) == made(again)  # flag off: the same proposals
    assert ("link", TANGLE) in [(p["kind"], p["payload"].get("dest")) for p in proposals_of(notes, off["id"])]
    assert ("link", TANGLE) not in [(p["kind"], p["payload"].get("dest")) for p in proposals_of(notes, on["id"])]


def test_a_relevance_verdict_from_search_overrides_the_evidence() -> None:
    from orgkit.memory.evidence import Match, NoteEvidence
    from orgkit.memory.librarian import link_targets

    strong = NoteEvidence("n1", "Noweb references", "noweb.org", [], [Match(1, 7, 0.9)])
    assert [n.id for n in link_targets([strong])[0]] == ["n1"]
    assert [n.id for n in link_targets([strong], on_topic=True)[0]] == ["n1"]
    none, why = link_targets([strong], on_topic=False)
    assert none == [] and "relevance floor" in why

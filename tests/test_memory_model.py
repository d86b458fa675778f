"""The librarian on the model seam, against the loopback chat server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_notes import FINDING, NOWEB, TANGLE, notes_with_loopback_model, rows


@pytest.fixture
def notes(tmp_path: Path, tiny_model, llm_server, monkeypatch) -> Path:
    return notes_with_loopback_model(tmp_path / "notes", llm_server, monkeypatch)


def deposit(cli, notes: Path, *extra: str) -> dict:
    result = cli("deposit", "--notes", str(notes), "--title", "Tangling and var", "--body", FINDING,
                 "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


GOOD = {"proposals": [
    {"kind": "link", "dest": TANGLE, "description": "how tangling works", "chunks": [1]},
    {"kind": "tag", "tag": "literate", "chunks": [1, 2]},
    {"kind": "append", "target": NOWEB, "text": "Prefer noweb over :var when tangling.", "chunks": [2]},
    {"kind": "new", "title": "Why var is refused", "body": "Evaluating :var would run code.", "chunks": [1]},
    {"kind": "link", "dest": TANGLE, "description": "made up", "chunks": [7]},
    {"kind": "link", "dest": "99999999-9999-4999-8999-999999999999", "description": "unseen", "chunks": [1]},
]}


def test_model_proposals_are_checked_against_what_the_model_saw(cli, notes: Path, llm_server) -> None:
    llm_server.reply(GOOD)
    dep = deposit(cli, notes)
    assert dep["status"] == "proposed" and dep["model"] == "http:loopback"
    sent = llm_server.requests[0]["messages"][-1]["content"]
    assert "[1] When tangling code blocks, orgkit refuses :var" in sent and "[2] Noweb references" in sent
    assert f"note {TANGLE}: Tangling code blocks" in sent and f"note {NOWEB}" in sent
    props = rows(notes, "SELECT * FROM proposals WHERE kind != 'admit' ORDER BY seq")
    assert [p["status"] for p in props] == ["pending"] * 4 + ["rejected"] * 2
    assert props[4]["reason"] == "set aside by the librarian: it cites chunk(s) 7, which the librarian was not shown"
    assert props[5]["reason"] == "set aside by the librarian: it names note 99999999-9999-4999-8999-999999999999, which the librarian was not shown"
    invalid = rows(notes, "SELECT * FROM audit WHERE action = 'proposal-invalid'")
    assert {a["subject"] for a in invalid} == {props[4]["id"], props[5]["id"]}
    assert rows(notes, "SELECT sha, model FROM watermarks")[0]["model"] == "http:loopback"

    ids = [p["id"] for p in props[:4]]
    result = cli("review", "accept", *ids, "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stderr
    assert "Prefer noweb over :var when tangling." in (notes / "noweb.org").read_text()
    new = next(p for p in props if p["kind"] == "new")
    created = [p for p in (notes / "deposits").glob("*.org") if new["payload"]["id"] in p.read_text()]
    assert len(created) == 1 and "#+title: Why var is refused" in created[0].read_text()
    assert f":DEPOSIT:  {dep['id']}" in created[0].read_text()
    recalled = json.loads(cli("recall", "why is var refused", "--notes", str(notes), "--json").stdout)
    entry = next(n for n in recalled["included"] if n["id"] == new["payload"]["id"])
    assert entry["provenance"]["origin"] == "librarian" and entry["provenance"]["deposit"] == dep["id"]
    assert entry["provenance"]["approved_by"] == "reviewer"
    # the note the accepted append went to, recalled by what it holds
    recalled = json.loads(cli("recall", "prefer noweb over var", "--notes", str(notes), "--json").stdout)
    noweb = next(n for n in recalled["included"] if n["id"] == NOWEB)
    assert noweb["provenance"]["changes"][0]["kind"] == "append"


def test_bad_json_twice_fails_without_watermark_and_is_retried(cli, notes: Path, llm_server) -> None:
    llm_server.reply("not json at all", "still {not json")
    dep = deposit(cli, notes)
    assert dep["status"] == "failed" and "invalid reply after one corrective retry" in dep["error"]
    assert len(llm_server.requests) == 2
    assert rows(notes, "SELECT * FROM watermarks") == []
    assert rows(notes, "SELECT kind FROM proposals") == [{"kind": "admit"}]
    assert rows(notes, "SELECT action FROM audit WHERE subject = ?", (dep["id"],))[-1]["action"] == "librarian-failed"
    assert json.loads(cli("deposits", "--notes", str(notes), "--json").stdout)[0]["status"] == "failed"
    assert len(llm_server.requests) == 2  # a listing never calls the model
    cli("librarian", "--notes", str(notes))
    listed = json.loads(cli("deposits", "--notes", str(notes), "--json").stdout)
    assert listed[0]["status"] == "failed"  # tried again (the canned bad reply repeats), still failed
    assert len(llm_server.requests) == 4

    llm_server.queue.clear()
    llm_server.reply(GOOD)
    cli("librarian", "--notes", str(notes))
    listed = json.loads(cli("deposits", "--notes", str(notes), "--json").stdout)
    assert listed[0]["status"] == "proposed" and listed[0]["error"] is None
    assert len(rows(notes, "SELECT * FROM watermarks")) == 1


def test_an_unchanged_deposit_is_not_sent_again(cli, notes: Path, llm_server) -> None:
    from orgkit.config import load
    from orgkit.memory import librarian
    from orgkit.memory.store import Store

    llm_server.reply({"proposals": []})
    dep = deposit(cli, notes)
    with Store(load(notes)) as store:
        outcome = librarian.run(store, dep["id"])
    assert outcome.status == "skipped" and len(llm_server.requests) == 1


def test_the_deposit_is_never_cut_for_related_notes() -> None:
    from orgkit.memory.librarian import Related, numbered_chunks, within_budget

    chunks = numbered_chunks("\n\n".join(f"paragraph {i} " + "word " * 300 for i in range(10)))
    related = [Related(f"id{i}", f"t{i}", f"f{i}.org", [], "text " * 400) for i in range(3)]
    seen = within_budget(chunks, related, budget=2000)
    assert seen.chunks == chunks and len(chunks) == 10
    assert seen.notes == [] and seen.left_out == ["id0", "id1", "id2"]
    roomy = within_budget(chunks[:1], related, budget=1200)
    assert [n.id for n in roomy.notes] == ["id0", "id1"] and roomy.notes[1].content.endswith("[...]")


def test_proposals_that_would_change_nothing_are_rejected(cli, notes: Path, llm_server) -> None:
    """The same finding deposited again: appending what a note already holds (spacing aside), or
    a link it already has, is stored rejected with the reason, not offered for review."""
    again = {"proposals": [
        {"kind": "append", "target": NOWEB, "text": "Prefer noweb over :var when tangling.", "chunks": [2]},
        {"kind": "link", "target": NOWEB, "dest": TANGLE, "description": "tangling", "chunks": [1]},
    ]}
    llm_server.reply(again)
    deposit(cli, notes)
    first = rows(notes, "SELECT * FROM proposals WHERE kind != 'admit' ORDER BY created, seq")
    assert [p["status"] for p in first] == ["pending", "pending"]
    accepted = cli("review", "accept", *[p["id"] for p in first], "--notes", str(notes), "--json")
    assert accepted.exit_code == 0, accepted.stderr
    again["proposals"][0]["text"] = "Prefer noweb over :var\n  when tangling."
    llm_server.reply(again)
    result = cli("deposit", "--notes", str(notes), "--title", "Tangling and var, again", "--body", FINDING, "--json")
    assert result.exit_code == 0, result.stderr
    second = rows(notes, "SELECT * FROM proposals WHERE kind != 'admit' AND deposit = ? ORDER BY seq",
                  (json.loads(result.stdout)["id"],))
    assert [(p["status"], p["reason"]) for p in second if p["kind"] != "duplicate-of"] == [
        ("rejected", "set aside by the librarian: the target already holds this text"),
        ("rejected", "set aside by the librarian: the target already links to that note")]
    twin = next(p for p in second if p["kind"] == "duplicate-of")  # the same finding, deposited before
    assert twin["status"] == "pending" and twin["payload"]["dest"] == first[0]["deposit"]

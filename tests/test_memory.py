"""The memory flow offline: deposit -> deterministic librarian -> review -> recall."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memory_notes import FINDING, GARDEN, NOWEB, TANGLE, make_notes, rows


@pytest.fixture
def notes(tmp_path: Path, tiny_model, monkeypatch) -> Path:
    for key in list(os.environ):
        if key.startswith("ORGKIT_LLM"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("USER", "reviewer")
    return make_notes(tmp_path / "notes")


def run_json(cli, *args: str, input: str | None = None):
    result = cli(*args, "--json", input=input)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def deposit(cli, notes: Path, *extra: str, title: str = "Tangling and var", body: str = FINDING) -> dict:
    return run_json(cli, "deposit", "--notes", str(notes), "--title", title, "--body", body, *extra)


def pending(cli, notes: Path) -> list[dict]:
    return run_json(cli, "review", "list", "--notes", str(notes))


@pytest.mark.parametrize("args, message", [
    (["--title", " ", "--body", "x"], "needs a title"),
    (["--title", "T", "--body", "  \n"], "needs a body"),
    (["--title", "T", "--body", "x", "--lane", "robot"], "'lane' must be one of agent, human"),
    (["--title", "T", "--body", "x", "--path", "../escape.org"], "inside the notes directory"),
    (["--title", "T", "--body", "x", "--path", "/tmp/abs.org"], "inside the notes directory"),
    (["--title", "T", "--body", "x", "--path", "tangle.org"], "already exists"),
    (["--title", "T", "--body", "x", "--path", ".orgkit/x.org"], "state dir"),
    (["--title", "T", "--body", "x", "--path", "orgkit-data/x.org"], "outside data/"),
    (["--title", "T", "--body", "x", "--path", "notes.txt"], ".org note"),
    (["--title", "T", "--body", "x", "--meta", "ID=x"], "set by orgkit"),
])
def test_bad_deposits_are_refused_and_write_nothing(cli, notes: Path, args, message) -> None:
    before = sorted(p.relative_to(notes) for p in notes.rglob("*.org"))
    result = cli("deposit", "--notes", str(notes), "--no-process", *args)
    assert result.exit_code == (2 if "--lane" in args else 1)
    assert message in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.relative_to(notes) for p in notes.rglob("*.org")) == before
    if (notes / "orgkit-data" / "memory.sqlite").exists():
        assert rows(notes, "SELECT * FROM deposits") == []


def test_a_symlinked_folder_out_of_the_notes_is_refused(cli, notes: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (notes / "link").symlink_to(outside)
    result = cli("deposit", "--notes", str(notes), "--title", "T", "--body", "x", "--path", "link/x.org")
    assert result.exit_code == 1 and "leaves the notes directory" in result.stderr
    assert list(outside.iterdir()) == []


def test_a_body_over_the_configured_size_is_refused(cli, notes: Path) -> None:
    (notes / "orgkit.toml").write_text("[deposit]\nmax_bytes = 16\n")
    result = cli("deposit", "--notes", str(notes), "--title", "T", "--body", "x" * 17)
    assert result.exit_code == 1 and "over deposit.max_bytes (16)" in result.stderr


def test_a_deposit_is_a_note_with_its_audit_record(cli, notes: Path) -> None:
    dep = deposit(cli, notes, "--no-process", "--meta", "source=https://example.org/run/1", "--lane", "human")
    assert dep["status"] == "pending" and dep["path"].startswith("deposits/")
    text = (notes / dep["path"]).read_text()
    assert f":ID:       {dep['id']}" in text and ":LANE:     human" in text
    assert ":DEPOSITED_VIA: cli" in text and ":CREATED:  [" in text and ":SOURCE: https://example.org/run/1" in text
    assert "#+title: Tangling and var" in text and FINDING.split("\n")[0] in text
    audit = rows(notes, "SELECT * FROM audit WHERE action = 'deposit'")
    assert [a["subject"] for a in audit] == [dep["id"]] and audit[0]["actor"] == "reviewer"
    again = cli("deposit", "--notes", str(notes), "--title", "T", "--body", "x", "--path", dep["path"])
    assert again.exit_code == 1 and "already exists" in again.stderr


def test_offline_flow_deposit_review_accept_recall_undo(cli, notes: Path) -> None:
    dep = deposit(cli, notes)
    assert dep["status"] == "no-model"
    proposals = pending(cli, notes)
    kinds = sorted((p["kind"], p["payload"].get("dest") or p["payload"].get("tag")) for p in proposals)
    assert ("admit", None) in kinds and ("link", TANGLE) in kinds and ("link", NOWEB) in kinds
    assert ("tag", "literate") in kinds and ("tag", "tools") in kinds
    assert ("link", GARDEN) not in kinds  # related by rank only, sharing no word with the deposit
    assert all(p["chunks"] for p in proposals if p["kind"] != "admit")
    link = next(p for p in proposals if p["kind"] == "link" and p["payload"]["dest"] == TANGLE)
    shown = cli("review", "show", link["id"], "--notes", str(notes))
    assert shown.exit_code == 0
    assert f"+- [[id:{TANGLE}][Tangling code blocks]]" in shown.stdout and f"b/{dep['path']}" in shown.stdout

    # Nothing is recalled from the deposit before a person admits it.
    early = run_json(cli, "recall", "tangling var noweb", "--notes", str(notes))
    assert dep["id"] not in [n["id"] for n in early["included"]]
    assert any(o["id"] == dep["id"] and "not admitted" in o["reason"] for o in early["omitted"])

    ids = [p["id"] for p in proposals if p["kind"] in ("admit", "link")]
    accepted = run_json(cli, "review", "accept", *ids, "--why", "useful", "--notes", str(notes))
    text = (notes / dep["path"]).read_text()
    assert f"[[id:{TANGLE}][Tangling code blocks]]" in text and f"[[id:{NOWEB}][Noweb references]]" in text
    assert {p["id"] for p in pending(cli, notes)} == {p["id"] for p in proposals} - set(ids)

    recalled = run_json(cli, "recall", "tangling var noweb", "--notes", str(notes), "--caller", "agent-7")
    entry = next(n for n in recalled["included"] if n["id"] == dep["id"])
    prov = entry["provenance"]
    assert prov["origin"] == "deposit" and prov["deposit"] == dep["id"] and prov["lane"] == "agent"
    assert prov["approved_by"] == "reviewer" and prov["approved_at"] and prov["review"] == "accepted"
    logged = rows(notes, "SELECT * FROM audit WHERE action = 'recall'")
    assert logged[-1]["actor"] == "agent-7" and dep["id"] in logged[-1]["detail"]["returned"]
    assert logged[-1]["detail"]["query"] == "tangling var noweb"

    decisions = rows(notes, "SELECT * FROM decisions WHERE action = 'accept'")
    assert {d["proposal"] for d in decisions} == set(ids)
    assert all(d["actor"] == "reviewer" and d["why"] == "useful" and d["at"] for d in decisions)
    one = next(d for d in decisions if d["proposal"] == link["id"])
    assert "[[id:" not in one["before"]["files"][dep["path"]] and "[[id:" in one["after"]["files"][dep["path"]]

    undone = run_json(cli, "review", "undo", accepted["batch"], "--notes", str(notes))
    assert (notes / dep["path"]).read_text().count("[[id:") == 0
    assert undone["undoes"] == accepted["batch"]
    statuses = {r["id"]: r["status"] for r in rows(notes, "SELECT id, status FROM proposals")}
    assert all(statuses[i] == "pending" for i in ids)  # decided again from scratch
    again = cli("review", "undo", accepted["batch"], "--notes", str(notes))
    assert again.exit_code == 1 and "already undone" in again.stderr


def test_undo_is_refused_when_a_file_was_edited_since(cli, notes: Path) -> None:
    dep = deposit(cli, notes)
    tag = next(p for p in pending(cli, notes) if p["kind"] == "tag")
    batch = run_json(cli, "review", "accept", tag["id"], "--notes", str(notes))["batch"]
    path = notes / dep["path"]
    path.write_text(path.read_text() + "\nA line the user added.\n")
    result = cli("review", "undo", batch, "--notes", str(notes))
    assert result.exit_code == 1 and f"{dep['path']} was edited since" in result.stderr
    assert "A line the user added." in path.read_text() and "#+filetags:" in path.read_text()


def test_rejecting_the_deposit_removes_its_note_and_undo_restores_it(cli, notes: Path) -> None:
    dep = deposit(cli, notes)
    admit = next(p for p in pending(cli, notes) if p["kind"] == "admit")
    text = (notes / dep["path"]).read_text()
    batch = run_json(cli, "review", "reject", admit["id"], "--why", "wrong", "--notes", str(notes))["batch"]
    assert not (notes / dep["path"]).exists()
    assert rows(notes, "SELECT why, action FROM decisions") == [{"why": "wrong", "action": "reject"}]
    run_json(cli, "review", "undo", batch, "--notes", str(notes))
    assert (notes / dep["path"]).read_text() == text
    assert admit["id"] in {p["id"] for p in pending(cli, notes)}


def test_edit_accepts_the_proposal_as_edited(cli, notes: Path, monkeypatch) -> None:
    dep = deposit(cli, notes)
    link = next(p for p in pending(cli, notes) if p["kind"] == "link" and p["payload"]["dest"] == NOWEB)
    monkeypatch.setenv("EDITOR", "sed -i s/Noweb/NOWEB/")
    monkeypatch.delenv("VISUAL", raising=False)
    run_json(cli, "review", "edit", link["id"], "--notes", str(notes))
    assert f"[[id:{NOWEB}][NOWEB references]]" in (notes / dep["path"]).read_text()
    edit = rows(notes, "SELECT * FROM decisions WHERE proposal = ?", (link["id"],))[0]
    assert edit["action"] == "edit"
    assert edit["before"]["payload"]["description"] == "Noweb references"
    assert edit["after"]["payload"]["description"] == "NOWEB references"


def test_auto_policy_admits_without_review(cli, notes: Path, user_config) -> None:
    user_config('[admission]\ndeposits = { agent = "auto" }\n')
    dep = deposit(cli, notes)
    assert pending(cli, notes) == []
    text = (notes / dep["path"]).read_text()
    assert f"[[id:{TANGLE}]" in text and "#+filetags: :literate:tools:" in text
    decisions = rows(notes, "SELECT DISTINCT actor, action FROM decisions")
    assert decisions == [{"actor": "admission policy", "action": "auto-accept"}]
    recalled = run_json(cli, "recall", "tangling var noweb", "--notes", str(notes))
    prov = next(n for n in recalled["included"] if n["id"] == dep["id"])["provenance"]
    assert prov["approved_by"] == "admission policy"


def test_recall_gives_each_of_its_notes_its_own_provenance(cli, notes: Path, user_config) -> None:
    """The store answers for all of a call's notes at once: no note may take another's origin."""
    user_config('[admission]\ndeposits = { agent = "auto" }\n')
    first = deposit(cli, notes)
    second = deposit(cli, notes, title="Tangling with var headers",
                     body="Header arguments named var are evaluated when tangling, so orgkit refuses them; "
                          "noweb references share the code instead.")
    recalled = run_json(cli, "recall", "tangling var noweb", "--notes", str(notes), "--budget", "8000")
    origins = {n["id"]: n["provenance"] for n in recalled["included"]}
    assert {first["id"], second["id"]} <= set(origins) and len(origins) > 2
    for dep in (first, second):
        assert (origins[dep["id"]]["origin"], origins[dep["id"]]["deposit"]) == ("deposit", dep["id"])
        assert origins[dep["id"]]["evidence"][0]["file"] == dep["path"]
    assert all(p["origin"] == "notes" and "deposit" not in p
               for node, p in origins.items() if node not in (first["id"], second["id"]))


def test_auto_approval_is_refused_when_evidence_was_deleted(cli, notes: Path, user_config) -> None:
    dep = deposit(cli, notes)
    link = next(p for p in pending(cli, notes) if p["kind"] == "link" and p["payload"]["dest"] == NOWEB)
    (notes / "noweb.org").unlink()
    user_config('[admission]\n"" = { agent = "auto" }\n')
    run_json(cli, "librarian", "--notes", str(notes))  # admission by policy is the librarian's work
    left = pending(cli, notes)
    assert [p["id"] for p in left] == [link["id"]]
    assert "left for a person to decide, not accepted by the auto policy: evidence note" in left[0]["reason"] and "deleted" in left[0]["reason"]
    assert f"[[id:{TANGLE}]" in (notes / dep["path"]).read_text()
    assert f"[[id:{NOWEB}]" not in (notes / dep["path"]).read_text()


def test_a_superseded_deposit_is_not_recalled(cli, notes: Path, user_config) -> None:
    user_config('[admission]\ndeposits = { agent = "auto" }\n')
    old = deposit(cli, notes)
    new = deposit(cli, notes, "--supersedes", old["id"], title="Tangling and var, corrected")
    assert new["supersedes"] == old["id"]
    recalled = run_json(cli, "recall", "tangling var noweb", "--notes", str(notes))
    assert old["id"] not in [n["id"] for n in recalled["included"]]
    assert any(o["id"] == old["id"] and new["id"] in o["reason"] for o in recalled["omitted"])
    twice = cli("deposit", "--notes", str(notes), "--title", "x", "--body", "y", "--supersedes", old["id"])
    assert twice.exit_code == 1 and "already superseded" in twice.stderr


def test_doctor_checks_audit_records_and_accepted_proposals(cli, notes: Path) -> None:
    import sqlite3

    dep = deposit(cli, notes)
    tag = next(p for p in pending(cli, notes) if p["kind"] == "tag")
    run_json(cli, "review", "accept", tag["id"], "--notes", str(notes))
    report = json.loads(cli("doctor", "--notes", str(notes), "--json").stdout)
    assert report["facts"]["memory"]["deposits"] == 1
    assert not [f for f in report["findings"] if f["check"] == "memory"]

    path = notes / dep["path"]
    path.write_text(path.read_text().replace(f":{tag['payload']['tag']}:", ":other:"))
    conn = sqlite3.connect(notes / "orgkit-data" / "memory.sqlite")
    conn.execute("DELETE FROM audit WHERE action = 'deposit'")
    conn.commit()
    conn.close()
    result = cli("doctor", "--notes", str(notes), "--json")
    assert result.exit_code == 1
    found = [f["message"] for f in json.loads(result.stdout)["findings"] if f["check"] == "memory"]
    assert f"deposit {dep['id']} has no audit record" in found
    assert any(f"accepted proposal {tag['id']} (tag)" in m and "no longer tagged" in m for m in found)


def test_notes_in_watched_folders_go_to_the_librarian(cli, notes: Path) -> None:
    (notes / "orgkit.toml").write_text('[librarian]\nfolders = ["inbox"]\n')
    (notes / "inbox").mkdir()
    mine = notes / "inbox" / "var.org"
    mine.write_text(":PROPERTIES:\n:ID:       44444444-4444-4444-8444-444444444444\n:END:\n"
                    "#+title: Var and noweb\n\n" + FINDING + "\n")
    run_json(cli, "librarian", "--notes", str(notes))  # takes the watched note in
    listed = run_json(cli, "deposits", "--notes", str(notes))
    assert [(d["id"], d["lane"], d["via"], d["status"]) for d in listed] == [
        ("44444444-4444-4444-8444-444444444444", "human", "watch", "no-model")]
    proposals = pending(cli, notes)
    assert proposals and all(p["kind"] != "admit" for p in proposals)
    link = next(p for p in proposals if p["kind"] == "link" and p["payload"]["dest"] == TANGLE)
    run_json(cli, "review", "accept", link["id"], "--notes", str(notes))
    run_json(cli, "librarian", "--notes", str(notes))  # our own change does not send it round again
    assert rows(notes, "SELECT count(*) AS n FROM audit WHERE action = 'taken-in'") == [{"n": 1}]
    recalled = run_json(cli, "recall", "var noweb tangling", "--notes", str(notes))
    assert any(n["id"] == "44444444-4444-4444-8444-444444444444" for n in recalled["included"])

    mine.write_text(mine.read_text() + "\nA change by hand.\n")
    run_json(cli, "librarian", "--notes", str(notes))
    assert rows(notes, "SELECT count(*) AS n FROM audit WHERE action = 'taken-in'") == [{"n": 2}]
    set_aside = rows(notes, "SELECT status, reason FROM proposals WHERE id != ? AND reason LIKE 'withdrawn: the note changed%'",
                     (link["id"],))
    assert set_aside and {r["status"] for r in set_aside} == {"rejected"}


def test_a_withheld_deposit_leaves_its_budget_to_the_next_notes(cli, notes: Path) -> None:
    dep = deposit(cli, notes)
    tokens = {n["id"]: n["tokens"] for n in run_json(cli, "context", "tangling var noweb", "--budget", "100000",
                                                      "--notes", str(notes))["included"]}
    budget = tokens[TANGLE] + tokens[NOWEB]  # no room for the deposit as well
    recalled = run_json(cli, "recall", "tangling var noweb", "--budget", str(budget), "--notes", str(notes))
    ids = [n["id"] for n in recalled["included"]]
    assert dep["id"] not in ids and {TANGLE, NOWEB} <= set(ids)
    assert recalled["budget"] == budget and recalled["tokens"] <= budget
    assert recalled["omitted"][0]["id"] == dep["id"] and "not admitted" in recalled["omitted"][0]["reason"]


def test_background_catch_up_without_a_warm_model_finishes_unfinished_deposits(cli, notes: Path) -> None:
    from orgkit import config
    from orgkit.memory.store import Store
    from orgkit.memory.worker import catch_up

    dep = deposit(cli, notes, "--no-process")
    assert dep["status"] == "pending"
    with Store(config.load(notes)) as store:
        done = catch_up(store)  # as the background thread calls it: the embedder from the config
    assert done.processed[dep["id"]].status == "no-model"
    assert [d["status"] for d in run_json(cli, "deposits", "--notes", str(notes))] == ["no-model"]


def test_review_texts_name_deposits_and_notes_by_title(cli, notes: Path) -> None:
    dep = deposit(cli, notes)
    listed = run_json(cli, "deposits", "--notes", str(notes))
    assert [(d["title"], d["lane"], d["stage"]) for d in listed] == [("Tangling and var", "agent", "in-review")]
    text = cli("deposits", "--notes", str(notes)).stdout
    assert text.startswith("'Tangling and var'  agent lane  in-review  ")
    proposals = pending(cli, notes)
    assert {(p["deposit_title"], p["deposit_lane"], p["deposit_stage"]) for p in proposals} == {
        ("Tangling and var", "agent", "in-review")}
    link = next(p for p in proposals if p["kind"] == "link" and p["payload"]["dest"] == TANGLE)
    assert link["target_title"] == "Tangling and var" and link["dest_title"] == "Tangling code blocks"
    assert link["summary"] == "link the deposit to 'Tangling code blocks'"
    shown = cli("review", "list", "--notes", str(notes)).stdout
    assert f"{link['id']}  link   pending  link the deposit to 'Tangling code blocks'" in shown
    assert f"    deposit 'Tangling and var' (agent lane, in-review) [{dep['id']}]" in shown
    batch = run_json(cli, "review", "accept", link["id"], "--notes", str(notes))["batch"]
    (listed_batch,) = run_json(cli, "review", "batches", "--notes", str(notes))
    assert listed_batch["id"] == batch and listed_batch["deposits"] == [{"id": dep["id"], "title": "Tangling and var"}]
    assert f"    deposit 'Tangling and var' [{dep['id']}]" in cli("review", "batches", "--notes", str(notes)).stdout


def test_a_proposal_is_named_by_a_literal_prefix_of_its_id(cli, notes: Path) -> None:
    deposit(cli, notes)
    first = pending(cli, notes)[0]["id"]
    assert cli("review", "show", first[:8], "--notes", str(notes)).exit_code == 0
    wildcard = cli("review", "show", first[:7] + "_", "--notes", str(notes))  # LIKE's any-one-character
    assert wildcard.exit_code == 1 and "no proposal" in wildcard.stderr

"""Scopes: search, context and recall answer from the person's notes unless asked for generated ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_notes
from orgkit.roles import OWNER, STDIO
from orgkit.extract.notes import claim_and_quote, claim_path
from orgkit.extract.schema import templates
from orgkit.index import Index
from orgkit.ops import OpContext, call

QUERY = ("compost", "heap")


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Path:
    """A person's note, an extraction's claim and quote (as the scribe writes them), a pending deposit."""
    root = write_notes(tmp_path_factory.mktemp("scoped") / "notes", {
        "garden.org": ":PROPERTIES:\n:ID: garden\n:END:\n#+title: Garden\n\nTurn the compost heap weekly.\n",
    })
    schema = next(s for s in templates() if s.name == "adr")
    dimension = schema.dimensions[0].name
    source = {"sha256": "ab" * 32, "source_id": "src", "name": "adr.md"}
    candidate = {"dimension": dimension, "start": 0, "end": 40, "claim": "The compost heap decides everything.",
                 "quote": "We decided the compost heap decides everything."}
    claim_id, _, text = claim_and_quote(root, "run1", schema, source, "hub", candidate)
    path = claim_path(root, "run1", 1, candidate, claim_id)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return root


@pytest.fixture(scope="module")
def ids(notes: Path) -> dict[str, str]:
    """The kind of every note, as the index decided it (the deposit is made here, pending review)."""
    ctx = OpContext(notes, {"state_dir": notes.parent / "state"})
    call(ctx, "deposit", {"title": "Compost heap findings", "body": "The compost heap runs hot.",
                          "no_process": True}, identity=OWNER)
    index = Index.at(notes, notes.parent / "state")
    ctx.refresh(embed=False)
    with index.snapshot() as conn:
        kinds = dict(conn.execute("SELECT kind, id FROM nodes WHERE level = 0 OR kind = 'quote'").fetchall())
    index.close()
    ctx.close()
    return kinds


def found(cli, notes: Path, op: str, *args: str) -> list[str]:
    result = cli(op, "--notes", str(notes), "--state-dir", str(notes.parent / "state"), "--json", *args, *QUERY)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    return [e["id"] for e in (out["included"] if op in ("context", "recall") else out)]


def test_each_kind_is_decided_at_index_time(ids: dict[str, str]) -> None:
    assert set(ids) == {"note", "claim", "quote", "deposit"}


def test_search_context_and_recall_answer_from_the_persons_notes_by_default(cli, notes: Path, ids, tiny_model) -> None:
    assert found(cli, notes, "search", "--mode", "lexical") == [ids["note"]]
    assert found(cli, notes, "context") == [ids["note"]]
    assert found(cli, notes, "recall") == [ids["note"]]


def test_a_scope_lets_generated_notes_in_and_a_claim_and_its_quote_share_one_place(cli, notes: Path, ids,
                                                                                  tiny_model) -> None:
    extractions = found(cli, notes, "search", "--mode", "lexical", "--scope", "extractions")
    assert ids["note"] in extractions and ids["deposit"] not in extractions
    assert len({ids["claim"], ids["quote"]} & set(extractions)) == 1
    pending = found(cli, notes, "search", "--mode", "lexical", "--scope", "pending")
    assert set(pending) == {ids["note"], ids["deposit"]}
    everything = found(cli, notes, "context", "--scope", "all")
    assert {ids["note"], ids["deposit"]} <= set(everything)
    assert len({ids["claim"], ids["quote"]} & set(everything)) == 1
    assert ids["deposit"] in found(cli, notes, "recall", "--scope", "pending")


def test_the_default_scope_is_a_setting(cli, notes: Path, ids, tiny_model, monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_SCOPE", "pending")
    assert ids["deposit"] in found(cli, notes, "search", "--mode", "lexical")
    monkeypatch.setenv("ORGKIT_SCOPE", "sideways")
    result = cli("search", "--notes", str(notes), "--state-dir", str(notes.parent / "state"), *QUERY)
    assert result.exit_code == 1 and "unknown scope 'sideways'" in result.stderr


def test_recall_while_the_model_loads_gives_one_true_warning(notes: Path, ids, tiny_model) -> None:
    ctx = OpContext(notes, {"state_dir": notes.parent / "state"}, warm=True)
    ctx.held.model_ready.clear()  # as while the background thread loads the model
    outcome = call(ctx, "recall", {"query": " ".join(QUERY)}, identity=STDIO)
    ctx.close()
    assert [w for w in outcome.warnings if "model" in w] == [
        "the embedding model is still loading; these results rank by words only"]
    assert outcome.result["reason"] == "the embedding model is still loading"


def test_an_unreadable_memory_database_is_said_not_taken_for_no_deposits(cli, tmp_path: Path) -> None:
    """Which deposits wait for review is the memory database's answer: when it cannot be read, search
    says so in one line instead of answering as if none waited (their text would come back as notes)."""
    notes = write_notes(tmp_path / "notes", {"a.org": ":PROPERTIES:\n:ID: a\n:END:\n#+title: Bees\n\nBees swarm.\n"})
    data = tmp_path / "data"
    data.mkdir()
    (data / "memory.sqlite").write_bytes(b"not a database, " * 64)
    result = cli("search", "bees", "--notes", str(notes), "--json", env={"ORGKIT_DATA_DIR": str(data)})
    assert result.exit_code == 1 and "memory database" in result.stderr and result.stdout == ""

"""context spends its budget in rank order, on notes with evidence of their own, and excerpts what answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_notes

FILLER = "The garden needs water in the summer and the cat sleeps on the wall all day.\n"
NOTES = {
    "cards.org": ":PROPERTIES:\n:ID: cards\n:END:\n#+title: Flashcards\n\n"
                 + FILLER * 30
                 + "* Principles\nWrite each flashcard prompt to be focused, precise and consistent; "
                   "a flashcard should ask for one idea, so the prompt makes retrieval effortful.\n\n"
                 + "* Background\n" + FILLER * 30
                 + "* References\n" + "- Flashcard prompt flashcard prompt flashcard retrieval (2019).\n" * 12,
    "pros.org": ":PROPERTIES:\n:ID: pros\n:END:\n#+title: Gardening\n\n" + FILLER * 3
                + "* Pros and Cons\nThe cat likes it; the dog does not.\n",
    "short.org": ":PROPERTIES:\n:ID: short\n:END:\n#+title: Retrieval\n\nA flashcard prompt makes retrieval effortful.\n",
}


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Path:
    return write_notes(tmp_path_factory.mktemp("packing") / "notes", NOTES)


def context(cli, notes: Path, budget: int, *query: str) -> dict:
    result = cli("context", "--notes", str(notes), "--json", "--budget", str(budget), *query)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_the_best_note_comes_first_as_the_passage_that_answers_not_its_references(cli, notes: Path,
                                                                                   tiny_model: Path) -> None:
    doc = context(cli, notes, 300, "flashcard", "prompt", "principles")
    first = doc["included"][0]
    assert first["id"] == "cards" and first["excerpt"]
    assert "focused, precise" in first["content"] and "(2019)" not in first["content"]
    assert doc["tokens"] <= 300


def test_what_nothing_relevant_would_fill_stays_unspent(cli, notes: Path, tiny_model: Path) -> None:
    doc = context(cli, notes, 4000, "flashcard", "prompts")
    first = doc["included"][0]
    assert first["id"] == "cards" and first["excerpt"] and "focused, precise" in first["content"]
    assert "* Background" not in first["content"]  # the rest of the note says nothing of flashcards
    assert "pros" not in [e["id"] for e in doc["included"]]
    assert doc["tokens"] < 1000


def test_a_mistyped_query_is_answered_as_it_was_read(cli, notes: Path, tiny_model: Path) -> None:
    doc = context(cli, notes, 2000, "flashcrd", "principels")
    assert doc["corrected"] == "flashcard principles"
    assert doc["included"][0]["id"] == "cards" and doc["reason"] is None


def test_a_heading_that_ranks_first_keeps_its_place_when_its_file_comes_after(cli, tmp_path: Path) -> None:
    """The file after one of its heading nodes gives only its other lines: the heading keeps its rank and ID."""
    notes = write_notes(tmp_path / "notes", {
        "bees.org": ":PROPERTIES:\n:ID: bees\n:END:\n#+title: Bees\n\nA hive keeps one queen and her workers.\n\n"
                    "* Swarming\n:PROPERTIES:\n:ID: swarming\n:END:\n"
                    "Swarming: the old queen leaves the hive with half the workers to found a new hive.\n",
        "other.org": ":PROPERTIES:\n:ID: other\n:END:\n#+title: Wasps\n\nWasps build paper nests.\n",
    })
    doc = context(cli, notes, 2000, "swarming", "queen", "hive")
    ids = [e["id"] for e in doc["included"]]
    assert ids[0] == "swarming" and "bees" in ids
    bees = doc["included"][ids.index("bees")]
    assert "Swarming:" not in bees["content"] and "one queen" in bees["content"]  # no line given twice
    assert not any("included instead" in o["reason"] for o in doc["omitted"])

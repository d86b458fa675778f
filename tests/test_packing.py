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


def test_every_note_gives_its_best_passage_before_any_gives_a_second(cli, tmp_path: Path, tiny_model: Path) -> None:
    """Breadth first: a long note's first turn is its best passage only, so the notes ranked after it get
    in; what they leave goes back to the excerpts in rank order."""
    filler = "The garden needs water in the summer and the cat sleeps on the wall all day.\n" * 20
    notes = write_notes(tmp_path / "notes", {
        f"pottery{i}.org": f":PROPERTIES:\n:ID: pottery{i}\n:END:\n#+title: Pottery {i}\n\n" + filler + "".join(
            f"* Firing {k}\nKiln glaze firing, step {k} of batch {i}: the glaze melts in the kiln and the "
            f"firing ends when the cones bend; a slow firing keeps the glaze from crawling.\n\n" for k in range(3))
        for i in range(8)})
    doc = context(cli, notes, 600, "kiln", "glaze", "firing")
    assert sorted(e["id"] for e in doc["included"]) == [f"pottery{i}" for i in range(8)]
    assert all(e["excerpt"] for e in doc["included"]) and doc["tokens"] <= 600
    assert doc["included"][0]["content"].count("Kiln glaze firing") > 1  # the room left widened the first
    assert not doc["omitted"]


def test_a_misspelt_query_gets_the_passage_of_the_word_it_was_taken_for(cli, tmp_path: Path,
                                                                         tiny_model: Path) -> None:
    """The excerpt of a long note is chosen for the query as search read it, not as typed."""
    filler = "The garden needs water in the summer and the cat sleeps on the wall all day.\n" * 25
    notes = write_notes(tmp_path / "notes", {
        "pottery.org": ":PROPERTIES:\n:ID: pottery\n:END:\n#+title: Pottery\n\n"
                       "* Kilns\nA kiln fires the clay hard.\n" + filler
                       + "* Glazes\nA glaze melts into glass over the clay.\n" + filler})
    doc = context(cli, notes, 300, "glazs")
    assert doc["corrected"] in ("glaze", "glazes"), doc
    first = doc["included"][0]
    assert first["id"] == "pottery" and first["excerpt"]
    assert "A glaze melts" in first["content"] and "A kiln fires" not in first["content"]


def test_a_long_notes_excerpt_starts_with_the_passage_search_showed(cli, tmp_path: Path, tiny_model: Path) -> None:
    """Context follows search within a note too: the passage a hit shows (chosen by the ranking the query
    trusted: here BM25, whose top passage holds every word) is the one its excerpt gives first, and
    widening the excerpt keeps it, though another passage of the note is nearer in meaning."""
    summer = "The garden needs water in the summer and the cat sleeps on the wall all day.\n" * 12
    notes = write_notes(tmp_path / "notes", {
        "beds.org": ":PROPERTIES:\n:ID: beds\n:END:\n#+title: Raised beds\n\n" + summer
                    + "* Mixing\nWe mix the compost into the soil before the seeds go in; the dog and the cat "
                      "watch from the wall, and the kitten sleeps in the sun all day while we work, and the people "
                      "said that the dog was very well and the cat would know the way over the wall.\n\n"
                    + "* Summer\n" + summer + "* Sowing\ncompost seeds compost seeds plants compost seeds\n\n"
                    + "* Winter\n" + summer,
        "rust.org": ":PROPERTIES:\n:ID: rust\n:END:\n#+title: Rust\n\nThe borrow checker gives memory safety.\n"})
    found = cli("search", "--notes", str(notes), "--json", "compost", "soil", "seeds")
    assert found.exit_code == 0, found.stderr
    shown = json.loads(found.stdout)[0]
    assert (shown["id"], shown["line"]) == ("beds", 18)  # the Mixing section, which holds all three words
    for budget, widened in ((60, False), (400, True)):
        first = context(cli, notes, budget, "compost", "soil", "seeds")["included"][0]
        assert first["id"] == "beds" and first["excerpt"]
        lines = [(p["line"], p["end_line"]) for p in first["passages"]]
        assert any(a <= 18 <= b for a, b in lines), (budget, lines)
        assert ("compost seeds compost" in first["content"]) is widened  # the nearer passage comes after

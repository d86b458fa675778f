"""context and recall fill the budget with passages: a long note gives its best sections, not nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_notes
from orgkit.index import Index, update
from orgkit.retrieve.context import NOTHING_RELEVANT, context

FILLER = "Nothing of note happens in this paragraph; it is here to make the note long. " * 6


def _long_note() -> str:
    sections = []
    for name in ("Beginnings", "Middles", "Endings"):
        sections.append(f"* {name}\n" + "\n".join(f"{FILLER}\n" for _ in range(4)))
    sections.insert(2, "* Sourdough starter\nFeed the sourdough starter flour and water every morning;\n"
                       "a warm kitchen makes the starter rise faster.\n")
    return ":PROPERTIES:\n:ID: long\n:END:\n#+title: Kitchen diary\n\n" + "".join(sections)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", {
        "long.org": _long_note(),
        "short.org": ":PROPERTIES:\n:ID: short\n:END:\n#+title: Bread\n\nBread wants a sourdough starter; "
                     "see [[id:long][the diary]].\n",
    })


def gather(cli, notes: Path, budget: int, *query: str) -> dict:
    result = cli("context", "--notes", str(notes), "--json", "--budget", str(budget), *query)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_long_note_gives_the_section_that_answers(cli, notes: Path, tiny_model: Path) -> None:
    doc = gather(cli, notes, 300, "sourdough", "starter")
    by_id = {e["id"]: e for e in doc["included"]}
    assert set(by_id) == {"short", "long"} and doc["tokens"] <= 300
    assert by_id["short"]["excerpt"] is False and "[[id:long]" in by_id["short"]["content"]
    part = by_id["long"]
    assert part["excerpt"] is True and part["whole_tokens"] > 300 > part["tokens"]
    assert "Feed the sourdough starter" in part["content"]
    first = next(p for p in part["passages"] if p["olp"])
    assert first["olp"] == ["Sourdough starter"]
    lines = (notes / "long.org").read_text().split("\n")
    assert lines[first["line"] - 1] == "* Sourdough starter"
    assert "\n".join(lines[first["line"] - 1:first["end_line"]]) in part["content"]  # whole lines only


def test_a_tiny_budget_gives_an_excerpt_rather_than_nothing(cli, notes: Path, tiny_model: Path) -> None:
    doc = gather(cli, notes, 30, "kitchen", "diary", "starter")
    assert doc["included"] and doc["tokens"] <= 30
    assert all(e["excerpt"] for e in doc["included"] if e["id"] == "long")


def test_a_best_passage_on_one_long_line_is_cut_to_its_first_words_not_dropped(cli, tmp_path: Path,
                                                                               tiny_model: Path) -> None:
    """A paragraph written on one line longer than the budget: the top hit gives its first words, marked cut."""
    paragraph = "The heron waits in the shallow reeds and strikes at passing fish with its long beak. " * 12
    notes = write_notes(tmp_path / "herons", {
        "heron.org": f":PROPERTIES:\n:ID: heron\n:END:\n#+title: Herons\n\n* Hunting\n{paragraph}\n"})
    for budget in (20, 100):
        doc = gather(cli, notes, budget, "heron", "hunting", "fish")
        [entry] = doc["included"]
        assert entry["id"] == "heron" and entry["excerpt"] and 0 < doc["tokens"] <= budget
        assert entry["content"].startswith("* Hunting\nThe heron waits") and entry["content"].endswith(" …")


def test_neighbouring_passages_merge_and_no_line_is_given_twice(cli, notes: Path, tiny_model: Path) -> None:
    doc = gather(cli, notes, 900, "sourdough", "starter", "kitchen")
    for entry in doc["included"]:
        spans = [(p["line"], p["end_line"]) for p in entry.get("passages", [])]
        assert all(a[1] + 1 < b[0] for a, b in zip(spans, spans[1:]))  # apart, in file order
    texts = [e["content"] for e in doc["included"]]
    assert len(texts) == len({e["id"] for e in doc["included"]})
    assert not any(a != b and a in b for a in texts for b in texts)


def test_nothing_relevant_gives_no_notes_and_names_the_near_miss(notes: Path, tmp_path: Path) -> None:
    """A question about what the notes never mention gets no notes and names search's best miss: one
    word held ("kitchen") among real words no note uses is no answer."""
    index = Index.at(notes, tmp_path / "state")
    update(index, embedder=None)
    result = context(index, "kitchen tables in Mongolia", budget=2000).to_json()
    assert result["included"] == [] and result["reason"] == NOTHING_RELEVANT
    assert [w for w in result["warnings"] if "nearest miss" in w] == [
        "nothing in the notes is relevant to 'kitchen tables in Mongolia'; "
        "the nearest miss was 'Kitchen diary' (long)"]
    kept = context(index, "kitchen", budget=2000).to_json()
    assert [e["id"] for e in kept["included"]] == ["long"] and kept["reason"] != NOTHING_RELEVANT
    # no note holds a word of it (by words alone): nothing relevant, said the same way, with no miss to name
    unheld = context(index, "zqxv wkjh", budget=2000).to_json()
    assert unheld["included"] == [] and unheld["reason"] == NOTHING_RELEVANT
    assert unheld["warnings"][-1] == "nothing in the notes is relevant to 'zqxv wkjh'"
    index.close()


def test_a_search_that_matches_nothing_says_so(cli, notes: Path) -> None:
    found = cli("search", "zqxv wkjh", "--mode", "lexical", "--notes", str(notes))  # by words: no note holds one
    assert found.exit_code == 0 and found.stdout == ""
    assert "orgkit: warning: nothing in the notes matches 'zqxv wkjh'" in found.stderr
    assert "nothing in the notes matches" not in cli("search", "kitchen", "--mode", "lexical", "--notes",
                                                     str(notes)).stderr


def test_a_call_reads_in_one_transaction_and_its_notes_passages_at_once(notes: Path, tmp_path: Path) -> None:
    """One snapshot for the whole call, and the passages of all its notes in one query, however many
    notes it excerpts and widens (a query a note, each in its own transaction, cost a server dozens
    of statements a call)."""
    index = Index.at(notes, tmp_path / "state")
    update(index, embedder=None)
    sent: list[str] = []
    index.conn.set_trace_callback(sent.append)
    result = context(index, "sourdough starter", budget=300).to_json()
    assert any(e["excerpt"] for e in result["included"])  # the long note was excerpted, and widened
    assert sum(s.split()[0].upper() == "BEGIN" for s in sent) == 1
    assert sum(s.split()[0].upper() == "COMMIT" for s in sent) == 1
    assert sum("JOIN chunks c ON c.file = s.file" in s for s in sent) == 1


def _agenda(errands: int) -> str:
    """An agenda file: a parent heading, then headings with no text under them, one of them about plumbing."""
    todos = [f"** TODO Errand number {n} of the week, nothing urgent about it" for n in range(errands)]
    todos.insert(errands // 2, "** TODO Call the plumber about the leaking kitchen tap")
    return ":PROPERTIES:\n:ID: agenda\n:END:\n#+title: Agenda\n\n* Errands\n" + "\n".join(todos) + "\n"


def test_a_note_of_headings_alone_gives_the_heading_that_answers(cli, tmp_path: Path, tiny_model: Path) -> None:
    """An agenda's headings say all they have to say on one line each: the one that matches is the excerpt,
    and the notes ranked after the agenda still come in."""
    notes = write_notes(tmp_path / "agenda", {
        "agenda.org": _agenda(120),
        "tap.org": ":PROPERTIES:\n:ID: tap\n:END:\n#+title: Kitchen tap\n\nThe kitchen tap leaks; a plumber "
                   "fits a new washer.\n",
    })
    doc = gather(cli, notes, 400, "plumber", "kitchen", "tap")
    by_id = {e["id"]: e for e in doc["included"]}
    assert set(by_id) == {"agenda", "tap"}, doc["omitted"]
    part = by_id["agenda"]
    assert part["excerpt"] and "TODO Call the plumber about the leaking kitchen tap" in part["content"]
    assert part["tokens"] < 100  # the heading that matches, not the first headings of the file


def test_a_heading_whose_lines_came_with_its_parent_is_no_reason_to_stop(tmp_path: Path) -> None:
    """A folder without IDs: a long section of bare headings ranks first and gives its matching lines,
    its child that holds them is said to be included already, and the notes after it still come in
    (a heading node's span ended a line past its text, and a section of headings alone gave no excerpt:
    nothing was included at all)."""
    changes = "\n".join(f"** Changed part {n} of the release" for n in range(60))
    notes = write_notes(tmp_path / "news", {
        "news.org": f"#+title: News\n\n* Kitchen tap plumbing\n** Fixed the kitchen tap plumbing bug\n{changes}\n",
        "tap.org": "#+title: Tap\n\nThe kitchen tap leaks; a plumbing washer fixes it.\n",
    })
    index = Index.at(notes, tmp_path / "state")
    update(index, embedder=None)
    result = context(index, "kitchen tap plumbing", budget=2000).to_json()
    assert [e["locator"] for e in result["included"]] == ["news.org::*Kitchen tap plumbing", "tap.org"]
    assert "** Fixed the kitchen tap plumbing bug" in result["included"][0]["content"]
    assert [(o["id"], o["reason"]) for o in result["omitted"]] == [
        ("news.org::*Fixed the kitchen tap plumbing bug", "given with news.org::*Kitchen tap plumbing, already included")]
    index.close()

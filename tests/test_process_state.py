"""What a process keeps between calls has one owner (ops/warm.py's ProcessState) and goes stale by
its rule: the index's generation, the config; and two notes dirs served by one process share
nothing but the language's word lists."""

from __future__ import annotations

from pathlib import Path

from conftest import write_notes
from orgkit.ops import OpContext, call
from orgkit.ops.warm import ProcessState
from orgkit.roles import STDIO

NOTE = ":PROPERTIES:\n:ID: {id}\n:END:\n#+title: {title}\n\n{body}\n"


def _note(node_id: str, title: str, body: str) -> str:
    return NOTE.format(id=node_id, title=title, body=body)


def _search(ctx: OpContext, query: str) -> list[str]:
    found = call(ctx, "search", {"query": query, "mode": "lexical"}, identity=STDIO)
    assert not found.failed, found.errors
    hits = found.result["hits"] if isinstance(found.result, dict) else found.result
    return [hit["id"] for hit in hits]


def test_a_new_generation_of_the_index_makes_its_word_counts_stale(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"zoo.org": _note("zoo", "Zoo", "The zebras graze.")})
    process = ProcessState()
    ctx = OpContext(notes, {"serve.recheck_after": 0}, warm=True, process=process)
    try:
        assert _search(ctx, "okapis zebras") == ["zoo"]
        counts = ctx.held.memo.counts
        assert counts.counts.get("okapi") == 0  # remembered: no passage holds it
        write_notes(notes, {"okapi.org": _note("okapi", "Okapi", "Okapis live in forests.")})
        assert _search(ctx, "okapis zebras")[0] == "okapi"  # the new generation counted afresh
        assert ctx.held.memo.counts is counts and counts.counts.get("okapi", 0) > 0
    finally:
        process.close()


def test_another_config_for_the_same_notes_gets_fresh_warm_things(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"zoo.org": _note("zoo", "Zoo", "The zebras graze.")})
    process = ProcessState()
    first = OpContext(notes, {"serve.recheck_after": 0}, warm=True, process=process)
    same = OpContext(notes, {"serve.recheck_after": 0}, warm=True, process=process)
    other = OpContext(notes, {"serve.recheck_after": 5}, warm=True, process=process)
    try:
        assert _search(first, "zebras") == ["zoo"]
        before = first.held
        assert same.held is before  # the same config: what the first call kept serves the next
        assert before.checked and len(before.memo.counts.counts) > 0
        changed = other.held
        assert changed is not before and changed.config["serve.recheck_after"] == 5
        assert not changed.checked and not changed.memo.counts.counts  # nothing carried over
        assert not before._pool  # the stale one was closed, its connections with it
        assert _search(other, "zebras") == ["zoo"]
    finally:
        process.close()


def test_two_notes_dirs_in_one_process_share_no_entries(tmp_path: Path) -> None:
    one = write_notes(tmp_path / "one", {"zoo.org": _note("zoo", "Zoo", "The zebras graze.")})
    two = write_notes(tmp_path / "two", {"farm.org": _note("farm", "Farm", "The goats graze.")})
    process = ProcessState()
    a = OpContext(one, warm=True, process=process)
    b = OpContext(two, warm=True, process=process)
    try:
        assert _search(a, "zebras goats") == ["zoo"]
        assert _search(b, "zebras goats") == ["farm"]
        held_a, held_b = a.held, b.held
        assert held_a is not held_b and held_a.memo is not held_b.memo
        assert held_a.memo.counts.counts.get("goat") == 0 and held_b.memo.counts.counts.get("zebra") == 0
        assert held_a.kept is not held_b.kept and held_a.vectors is not held_b.vectors
        assert {i.root for i in held_a._pool} == {one} and {i.root for i in held_b._pool} == {two}
        assert held_a.memo.lexicon._words("en") is held_b.memo.lexicon._words("en")  # the language's: shared
        a.close()  # one folder done with: the other's warm things stay
        assert process.warm(b.config) is held_b
    finally:
        process.close()

"""A warm process keeps what it read between calls (note files read and parsed, the index's word
counts): never stale, never unbounded, never a way past the symlink check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write_notes
from orgkit.roles import STDIO
from orgkit.errors import OrgkitError
from orgkit.index import Index, update
from orgkit.ops import OpContext, call
from orgkit.retrieve.search import search
from orgkit.texts import KeptFiles, TextCache

NOTE = ":PROPERTIES:\n:ID: {id}\n:END:\n#+title: {title}\n\n{body}\n"


def _note(node_id: str, title: str, body: str) -> str:
    return NOTE.format(id=node_id, title=title, body=body)


def test_an_unchanged_file_is_kept_and_a_changed_one_read_again(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"a.org": _note("a", "Apples", "Apples are red.")})
    kept = KeptFiles(notes, racy_ns=0)
    first = kept.get("a.org", ())
    assert kept.get("a.org", ()) is first  # not read again
    parsed = first.parse("a.org")
    assert [n.id for n in parsed.nodes] == ["a"]
    (notes / "a.org").write_text(_note("a2", "Apples", "Apples are green and sour."))
    second = kept.get("a.org", ())
    assert "green" in second.text and [n.id for n in second.parse("a.org").nodes] == ["a2"]
    os.utime(notes / "a.org")  # touched, not changed: read again, its parse kept
    assert kept.get("a.org", ()).parse("a.org") is second.parse("a.org")


def test_a_file_changed_just_now_is_read_again_at_each_use(tmp_path: Path) -> None:
    """Two writes within one tick of the file system's clock leave the same size and times: a file
    changed just now is read again at each use (and parsed again only when its text differs)."""
    notes = write_notes(tmp_path / "notes", {"a.org": _note("a", "Apples", "Apples are red.")})
    kept = KeptFiles(notes)
    first = kept.get("a.org", ())
    parsed = first.parse("a.org")
    again = kept.get("a.org", ())
    assert again is not first and again.parse("a.org") is parsed
    for colour in ("tan", "old", "red"):  # the same size each time
        (notes / "a.org").write_text(_note("a", "Apples", f"Apples are {colour}."))
        assert f"are {colour}." in kept.get("a.org", ()).text


def test_the_kept_files_stay_within_their_limit(tmp_path: Path) -> None:
    files = {f"n{i}.org": _note(f"n{i}", f"Note {i}", "x" * 40) for i in range(5)}
    notes = write_notes(tmp_path / "notes", files)
    size = len(files["n0.org"])
    kept = KeptFiles(notes, limit=2 * size, racy_ns=0)
    for rel in files:
        kept.get(rel, ())
    assert len(kept) == 2 and kept.chars == 2 * size
    kept.get("n3.org", ())  # used last: n4 goes first
    kept.get("n0.org", ())
    assert kept.get("n3.org", ()) is kept.get("n3.org", ()) and len(kept) == 2
    write_notes(notes, {"huge.org": _note("huge", "Huge", "y" * (3 * size))})
    assert "yyy" in kept.get("huge.org", ()).text and kept.chars <= 2 * size  # read, not kept


def test_a_kept_file_replaced_by_a_link_out_of_the_notes_is_refused(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"a.org": _note("a", "Apples", "Apples are red.")})
    secret = write_notes(tmp_path / "outside", {"secret.org": _note("s", "Secret", "The key is 1234.")})
    kept = KeptFiles(notes, racy_ns=0)
    texts = TextCache(notes, kept=kept)
    assert "red" in (texts.text("a.org") or "")
    (notes / "a.org").unlink()
    (notes / "a.org").symlink_to(secret / "secret.org")
    with pytest.raises(OrgkitError, match="symlink leading outside"):
        kept.get("a.org", ())
    again = TextCache(notes, kept=kept)
    assert again.text("a.org") is None and again.parsed("a.org") is None
    assert "outside the notes" in again.warnings[0]


def test_a_warm_context_gives_a_note_as_it_is_now(tmp_path: Path, tiny_model: Path) -> None:
    notes = write_notes(tmp_path / "notes", {
        "bread.org": _note("bread", "Sourdough bread", "Sourdough bread rises with a starter fed daily."),
        "tea.org": _note("tea", "Green tea", "Green tea wants water below boiling."),
    })
    ctx = OpContext(notes, warm=True)
    try:
        first = call(ctx, "context", {"query": "sourdough bread starter"}, identity=STDIO).result
        assert [e["id"] for e in first["included"]][:1] == ["bread"]
        assert "fed daily" in first["included"][0]["content"]
        assert ctx.kept is not None and len(ctx.kept) >= 1
        (notes / "bread.org").write_text(_note("bread", "Sourdough bread",
                                               "Sourdough bread rises with a starter fed twice a day."))
        second = call(ctx, "context", {"query": "sourdough bread starter", "no_update": True}, identity=STDIO).result
        assert "fed twice a day" in second["included"][0]["content"]
    finally:
        ctx.close()


def test_word_counts_kept_for_one_index_are_counted_again_when_it_changes(tmp_path: Path) -> None:
    """A word no passage held is not searched for; once a note holds it, it is."""
    notes = write_notes(tmp_path / "notes", {"zoo.org": _note("zoo", "Zoo", "The zebras graze.")})
    index = Index.at(notes, tmp_path / "state")
    try:
        update(index)
        before = search(index, "okapis zebras", mode="lexical")
        assert [h.id for h in before.hits] == ["zoo"]
        write_notes(notes, {"okapi.org": _note("okapi", "Okapi", "Okapis live in forests.")})
        update(index)
        after = search(index, "okapis zebras", mode="lexical")
        assert [h.id for h in after.hits][0] == "okapi" and after.corrected is None
    finally:
        index.close()

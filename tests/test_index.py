"""The index: incremental updates, model changes, passages, schema, state directory."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import write_notes
from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index, update
from orgkit.index.chunks import MAX_CHARS, chunk_file
from orgkit.index.store import headings, olps
from orgkit.storage.backend import SqliteBackend
from orgkit.storage.schema import MIGRATIONS
from orgkit.org import parse_org

NOTES = {
    "cats.org": """
        :PROPERTIES:
        :ID:       cats
        :END:
        #+title: Cats

        Cats are small feline pets. See [[id:dogs][Dogs]].

        * Kittens
        :PROPERTIES:
        :ID:       kittens
        :END:
        A kitten is a young cat.
    """,
    "dogs.org": """
        :PROPERTIES:
        :ID:       dogs
        :END:
        #+title: Dogs

        Dogs are canine pets, loyal to their people. Unlike [[id:cats][cats]].
    """,
    "garden/tomatoes.org": """
        :PROPERTIES:
        :ID:       tomatoes
        :END:
        #+title: Tomatoes

        Tomatoes are plants; they need water, soil and compost.
    """,
}


def dump(index: Index) -> dict:
    """The index's content without row numbers: what two equal indexes share."""
    conn = sqlite3.connect(index.path)
    try:
        # The full-text index matches the text it reads through its view.
        conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')")
        node_ids = dict(conn.execute("SELECT rowid, id FROM nodes"))
        nodes = conn.execute("SELECT id, file, level, pos, line, end_line, title, todo, "
                             "priority, outline, tags, refs, properties FROM nodes").fetchall()
        paths = olps(conn, SqliteBackend(), [r[9] for r in nodes])
        chunks = conn.execute("SELECT c.node, c.file, c.line, f.title, c.outline, c.body, c.hash "
                              "FROM chunks c JOIN files f ON f.path = c.file").fetchall()
        heads = headings(conn, SqliteBackend(), [(r[3], r[4]) for r in chunks])
        return {
            "files": sorted(conn.execute("SELECT path, size, hash, title FROM files")),
            "nodes": sorted(r[:9] + (json.dumps(paths.get(r[9], [])),) + r[10:] for r in nodes),
            "aliases": sorted((node_ids[n], a) for n, a in conn.execute("SELECT node, alias FROM aliases")),
            "links": sorted(conn.execute("SELECT * FROM links")),
            "chunks": sorted((node_ids[r[0]], r[1], r[2], head, r[5], r[6]) for r, head in zip(chunks, heads)),
            "fts": sorted(conn.execute("SELECT c.hash, f.heading, f.body FROM chunks_fts f "
                                       "JOIN chunks c ON c.rowid = f.rowid")),
            "vectors": {(m, h): np.frombuffer(v, dtype=np.float32)
                        for m, h, v in conn.execute("SELECT model, hash, vector FROM vectors")},
        }
    finally:
        conn.close()


def assert_same_index(got: dict, want: dict) -> None:
    """Equal tables; vectors equal up to float rounding (batching changes the last bits)."""
    assert {k: v for k, v in got.items() if k != "vectors"} == {k: v for k, v in want.items() if k != "vectors"}
    assert got["vectors"].keys() == want["vectors"].keys()
    for key, vector in got["vectors"].items():
        np.testing.assert_allclose(vector, want["vectors"][key], atol=1e-5)


def fresh_dump(root: Path, tmp_path: Path, embedder: Embedder | None) -> dict:
    index = Index.at(root, tmp_path / "fresh-state")
    update(index, embedder=embedder, rebuild=True)
    index.close()
    return dump(index)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def test_incremental_add_change_rename_delete(notes: Path, tmp_path: Path, tiny_model: Path) -> None:
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes)
    first = update(index, embedder=embedder)
    assert (first.files, first.parsed, first.removed) == (3, 3, 0)
    assert first.embedded == first.chunks > 0 and first.pending == 0
    assert (notes / ".orgkit" / "index.sqlite").is_file()

    again = update(index, embedder=embedder)
    assert (again.parsed, again.embedded, again.removed) == (0, 0, 0)

    write_notes(notes, {"seeds.org": ":PROPERTIES:\n:ID: seeds\n:END:\n#+title: Seeds\n\nSeeds grow.\n"})
    added = update(index, embedder=embedder)
    assert (added.parsed, added.embedded) == (1, 1)

    path = notes / "dogs.org"
    path.write_text(path.read_text() + "\nDogs dig in the garden.\n")
    changed = update(index, embedder=embedder)
    assert changed.parsed == 1 and changed.embedded == 1

    os.utime(notes / "cats.org", ns=(1, 1))  # touched, same content: re-hashed, not re-parsed
    touched = update(index, embedder=embedder)
    assert (touched.parsed, touched.embedded) == (0, 0)

    (notes / "garden").rename(notes / "plants")
    renamed = update(index, embedder=embedder)
    assert (renamed.parsed, renamed.removed, renamed.embedded) == (1, 1, 0)
    assert index.locate(["tomatoes"]) == {"tomatoes": ["plants/tomatoes.org"]}

    (notes / "seeds.org").unlink()
    deleted = update(index, embedder=embedder)
    assert deleted.removed == 1 and index.locate(["seeds"]) == {}
    index.close()
    assert_same_index(dump(index), fresh_dump(notes, tmp_path, embedder))


def test_file_states_are_kept_until_the_index_changes(notes: Path) -> None:
    """A warm process reads the files' rows once per generation of the index: its own writes and
    another process's are seen, and a stale row only costs a file's hash."""
    for path in notes.rglob("*.org"):  # not written a moment ago, when a row's mtime waits for the next check
        os.utime(path, ns=(10**9, 10**9))
    index, other = Index.at(notes), Index.at(notes)
    update(index)
    states = index.file_states()
    assert index.file_states() is states and update(index).parsed == 0

    os.utime(notes / "cats.org", ns=(1, 1))  # touched: its row changes, the generation does not
    assert update(index).parsed == 0
    assert index.file_states()["cats.org"].mtime_ns == 1

    path = notes / "dogs.org"
    path.write_text(path.read_text() + "\nDogs dig.\n")
    os.utime(path, ns=(2 * 10**9, 2 * 10**9))
    assert update(other).parsed == 1  # another process changes a file: the generation moves on
    assert index.file_states()["dogs.org"] == other.file_states()["dogs.org"] != states["dogs.org"]
    assert update(index).parsed == 0

    os.utime(notes / "garden" / "tomatoes.org", ns=(5, 5))
    assert update(other).parsed == 0  # touched by the other process: this one's row is stale...
    assert index.file_states()["garden/tomatoes.org"].mtime_ns != 5
    assert update(index).parsed == 0  # ...so the file is hashed again, not parsed
    assert index.file_states()["garden/tomatoes.org"].mtime_ns == 5
    index.close()
    other.close()


def test_a_sibling_workers_check_of_the_files_counts_as_this_ones(notes: Path, monkeypatch) -> None:
    """A server's workers share the state dir: a worker that asks within `serve.recheck_after` of
    another's whole check of the files takes that check as its own (it does not walk the notes
    again), and checks itself once that check is older; a stamp from the future is not believed."""
    from orgkit.index.update import CHECKED
    from orgkit.ops import OpContext

    monkeypatch.setenv("ORGKIT_RECHECK_AFTER", "30")
    first, second = OpContext(notes, warm=True), OpContext(notes, warm=True)
    first.refresh(embed=False)
    stamp = first.config.state_dir / CHECKED
    before = first.index.file_states()["dogs.org"]
    path = notes / "dogs.org"
    path.write_text(path.read_text() + "\nDogs howl at sirens.\n")

    os.utime(stamp, (time.time() - 29.8,) * 2)
    second.refresh(embed=False)  # the sibling's check, 29.8 s ago, is its own: the edit is not seen yet
    assert second.index.file_states()["dogs.org"] == before
    time.sleep(0.3)
    second.refresh(embed=False)  # that check is 30.1 s old now: this worker walks the notes
    assert second.index.file_states()["dogs.org"] != before

    path.write_text(path.read_text() + "\nAnd at the moon.\n")
    os.utime(stamp, (time.time() + 3600,) * 2)
    third = OpContext(notes, warm=True)
    third.refresh(embed=False)
    assert third.index.file_states()["dogs.org"].size == path.stat().st_size
    for ctx in (first, second, third):
        ctx.close()


def test_model_change_reembeds_and_switching_back_is_free(notes: Path, tmp_path: Path,
                                                          tiny_model: Path, monkeypatch) -> None:
    from tiny_model import build_tiny_model

    index = Index.at(notes)
    total = update(index, embedder=Embedder.from_config(load(notes))).embedded
    other = build_tiny_model(tmp_path / "other-model", seed=1)
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(other))
    assert update(index, embedder=Embedder.from_config(load(notes))).embedded == total
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(tiny_model))
    assert update(index, embedder=Embedder.from_config(load(notes))).embedded == 0


def test_no_model_indexes_words_and_says_so_once(notes: Path, cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(tmp_path / "no-such-model"))
    result = cli("index", "--notes", str(notes), "--json")
    assert result.exit_code == 0
    stats = json.loads(result.stdout)
    assert stats["parsed"] == 3 and stats["embedded"] == 0 and stats["pending"] == stats["chunks"]
    assert result.stderr.count("no-such-model") == 1 and "words only" in result.stderr
    found = cli("search", "--notes", str(notes), "--json", "loyal canine")
    assert found.exit_code == 0
    assert json.loads(found.stdout)[0]["id"] == "dogs"
    assert "ranking by words only" in found.stderr


def test_no_embed_builds_the_word_index_only(notes: Path, cli, tiny_model: Path) -> None:
    result = cli("index", "--notes", str(notes), "--no-embed", "--json")
    stats = json.loads(result.stdout)
    assert stats["embedded"] == 0 and stats["chunks"] > 0
    assert json.loads(cli("search", "--notes", str(notes), "--mode", "lexical", "--no-update",
                          "--json", "compost").stdout)[0]["id"] == "tomatoes"


def test_org_files_under_a_data_folder_are_left_out_and_named(cli, tmp_path: Path) -> None:
    """org-roam reads no note under a data/ folder (org-attach's); a folder that is not org-roam's
    may keep notes there, so index and doctor name what they leave out, rather than drop it unsaid."""
    root = write_notes(tmp_path / "notes", {
        "kept.org": "* Kept\nRead.\n",
        "data/analysis.org": "* Analysis\nNot read.\n",
        "projects/metadata/schema.org": "* Schema\nNot read either: its path holds data/.\n",
        "data/picture.png": "not org",
        **{f"data/more/{n}.org": "* More\n" for n in range(3)},
    })
    result = cli("index", "--no-embed", "--notes", str(root))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "orgkit: warning: left out 5 org file(s) whose path holds data/, where Org keeps attachments and "
        "org-roam reads no notes: data/analysis.org, data/more/0.org, data/more/1.org and 2 more"]
    assert json.loads(cli("index", "--no-embed", "--notes", str(root), "--json").stdout)["attachments"] == 5
    assert [h["file"] for h in json.loads(cli("scan", "analysis", "--notes", str(root), "--json").stdout)] == []
    doctor = json.loads(cli("doctor", "--notes", str(root), "--json").stdout)
    named = sorted(i["file"] for i in doctor["findings"] if i["check"] == "attachment")
    assert named == ["data/analysis.org", "data/more/0.org", "data/more/1.org", "data/more/2.org",
                     "projects/metadata/schema.org"]
    plain = write_notes(tmp_path / "plain", {"a.org": "* A\n"})
    assert cli("index", "--no-embed", "--notes", str(plain)).stderr == ""


def test_state_dir_option_and_environment(notes: Path, cli, tmp_path: Path, tiny_model: Path,
                                          monkeypatch) -> None:
    state = tmp_path / "state"
    assert cli("index", "--notes", str(notes), "--state-dir", str(state)).exit_code == 0
    assert (state / "index.sqlite").is_file() and not (notes / ".orgkit").exists()
    monkeypatch.setenv("ORGKIT_STATE_DIR", str(tmp_path / "env-state"))
    assert cli("index", "--notes", str(notes), "--no-embed").exit_code == 0
    assert (tmp_path / "env-state" / "index.sqlite").is_file()


def test_rebuild_and_a_newer_schema_is_refused(notes: Path, cli, tiny_model: Path) -> None:
    assert cli("index", "--notes", str(notes), "--no-embed").exit_code == 0
    db = notes / ".orgkit" / "index.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    refused = cli("index", "--notes", str(notes))
    assert refused.exit_code == 1 and "--rebuild" in refused.stderr and "Traceback" not in refused.stderr
    rebuilt = cli("index", "--notes", str(notes), "--rebuild", "--json")
    assert rebuilt.exit_code == 0 and json.loads(rebuilt.stdout)["parsed"] == 3


def test_passages_follow_the_outline() -> None:
    long_paragraphs = "\n\n".join(f"Paragraph {i} " + "word " * 30 for i in range(24))
    text = (
        ":PROPERTIES:\n:ID: f\n:END:\n#+title: File\n#+filetags: :x:\n\nIntro text.\n"
        "* Parent\n** Child\n:PROPERTIES:\n:ID: c\n:CUSTOM: hidden-value\n:END:\n"
        "SCHEDULED: <2024-01-01>\nChild text with [[id:f][a link]].\n"
        "#+begin_src python\nprint('code')\n#+end_src\n"
        f"* Long\n{long_paragraphs}\n"
    )
    chunks = chunk_file(parse_org(text, "f.org"), text)
    texts = [c.text for c in chunks]
    assert texts[0] == "File: Intro text."
    child = next(c for c in chunks if c.node.id == "c")
    assert child.text == "File > Parent > Child: Child text with a link.\n\nprint('code')"
    assert child.line == 9
    assert not any("hidden-value" in t or "PROPERTIES" in t or "filetags" in t or "SCHEDULED" in t
                   for t in texts)
    long = [c for c in chunks if c.heading == "File > Long"]
    assert len(long) > 2 and all(len(c.body) <= MAX_CHARS for c in long)
    assert all(c.node.id == "f" for c in long)
    assert long[0].line == 19 and [c.line for c in long] == sorted(c.line for c in long)
    for before, after in zip(long, long[1:]):  # a short paragraph carried over as overlap
        assert before.body.split("\n\n")[-1] == after.body.split("\n\n")[0]


def test_a_heading_with_no_text_is_a_passage_when_nothing_under_it_carries_its_words() -> None:
    """An agenda's TODO headings have no text under them: each is a passage of the file's node, so its
    words are found; a heading whose child has text stays only in that child's path."""
    text = (":PROPERTIES:\n:ID: f\n:END:\n#+title: File\n\n* Errands\n** TODO Call the plumber\n"
            "SCHEDULED: <2024-01-01>\n** DONE Buy stamps\n* Parent\n** Child\nChild text.\n* Last leaf\n")
    chunks = chunk_file(parse_org(text, "f.org"), text)
    assert [(c.line, c.text) for c in chunks] == [
        (1, "File"), (7, "File > Errands > Call the plumber"), (9, "File > Errands > Buy stamps"),
        (11, "File > Parent > Child: Child text."), (13, "File > Last leaf")]


def test_orgkit_cli_imports_stay_light() -> None:
    import subprocess
    import sys

    code = ("import sys, orgkit.cli, orgkit.cli.servers; orgkit.cli._op_commands(); "
            "print('numpy' in sys.modules, 'fastembed' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_missing_notes_directory_is_a_user_error(cli, tmp_path: Path) -> None:
    result = cli("index", "--notes", str(tmp_path / "absent"))
    assert result.exit_code == 1 and "notes directory not found" in result.stderr



def test_a_note_a_warm_process_writes_is_found_by_its_next_call_at_once(notes: Path, monkeypatch) -> None:
    """A server that writes a note (`new`) answers the next call with it, although its own last check
    and a sibling worker's stamp are both recent: both began before the write."""
    from orgkit.index.update import CHECKED
    from orgkit.ops import OpContext, call
    from orgkit.roles import STDIO

    monkeypatch.setenv("ORGKIT_RECHECK_AFTER", "30")
    ctx = OpContext(notes, warm=True)
    ctx.refresh(embed=False)
    os.utime(ctx.config.state_dir / CHECKED, (time.time() - 0.5,) * 2)
    made = call(ctx, "new", {"title": "Sirens at night", "body": "Dogs howl at sirens."}, identity=STDIO).result
    assert call(ctx, "links", {"id": made["id"]}, identity=STDIO).result is not None  # not "unknown ID"
    ctx.close()


def test_a_warm_recall_leaves_the_files_unchecked_until_the_check_is_due(notes: Path, monkeypatch) -> None:
    """Recall writes its audit line, never a note: the next call does not walk the files again
    (at 10k files a walk is a quarter of a second of CPU), so a file added meanwhile waits for
    the next due check."""
    from orgkit.ops import OpContext, call
    from orgkit.roles import STDIO

    monkeypatch.setenv("ORGKIT_RECHECK_AFTER", "30")
    ctx = OpContext(notes, warm=True)
    ctx.refresh(embed=False)
    (notes / "late.org").write_text(":PROPERTIES:\n:ID: late-note\n:END:\n#+title: Quokka census\n\nQuokkas.\n")
    from orgkit.errors import NotFound

    call(ctx, "recall", {"query": "quokka census"}, identity=STDIO)
    with pytest.raises(NotFound):  # not checked yet
        call(ctx, "links", {"id": "late-note"}, identity=STDIO)
    call(ctx, "new", {"title": "Sirens at night", "body": "Dogs howl at sirens."}, identity=STDIO)
    assert call(ctx, "links", {"id": "late-note"}, identity=STDIO).result is not None
    ctx.close()


def test_a_rebuilt_index_goes_on_from_the_generation_it_replaces(notes: Path, tiny_model: Path) -> None:
    """What a warm process remembers of an index is keyed by its generation: a rebuild that counted
    again from one would hand it an older index's facts (a passage count, a vector index) as its own."""
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes)
    update(index, embedder=embedder)
    before = index.generation()
    with index.snapshot() as conn:
        assert index.fact(conn, "passages", lambda: index.backend.passage_count(conn)) > 0
    update(index, embedder=embedder, rebuild=True)
    assert index.generation() > before
    with index.snapshot() as conn:
        asked = []
        index.fact(conn, "passages", lambda: asked.append(1) or 1)
        assert asked == [1]  # a new generation: the fact is read afresh
    index.close()

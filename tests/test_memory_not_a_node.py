"""A deposit whose note is not (or is no longer) a node the index sees ends `refused`, with one line.

Nothing the librarian can do brings such a note back, so it must not wait for it forever:
it leaves the queue with its reason, its pending proposals are withdrawn, the note itself is
left as it is, and later runs do not touch it again. What an agent sends can never put it in
that state: a `--meta` key naming a property org or org-roam acts on is refused.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from pathlib import Path

import pytest

from memory_notes import FINDING, make_notes, rows


@pytest.fixture
def notes(tmp_path: Path, tiny_model, monkeypatch) -> Path:
    for key in list(os.environ):
        if key.startswith("ORGKIT_LLM"):
            monkeypatch.delenv(key)
    return make_notes(tmp_path / "notes")


def _json(cli, *args: str):
    result = cli(*args, "--json")
    assert result.exit_code == 0 and "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout), result.stderr


def _excluded(note: Path) -> None:
    note.write_text(note.read_text().replace(":END:", ":ROAM_EXCLUDE: t\n:END:", 1))


def _no_id(note: Path) -> None:
    note.write_text("".join(line for line in note.read_text().splitlines(keepends=True)
                            if not line.startswith(":ID:")))


def _removed(note: Path) -> None:
    note.unlink()


def _deposit(cli, notes: Path) -> tuple[str, Path]:
    dep, _ = _json(cli, "deposit", "--notes", str(notes), "--title", "Var", "--body", FINDING, "--no-process")
    return dep["id"], notes / dep["path"]


@pytest.mark.parametrize("spoil", [_excluded, _no_id, _removed])
def test_a_deposit_whose_note_stops_being_a_node_is_refused_once(cli, notes: Path, spoil) -> None:
    dep, note = _deposit(cli, notes)
    spoil(note)
    left = note.read_bytes() if note.exists() else None
    done, err = _json(cli, "librarian", "--notes", str(notes))
    assert done["waiting"] == 0
    line = next(line for line in err.splitlines() if dep in line)
    assert "refused" in line and ("no longer" in line)
    (listed,), err = _json(cli, "deposits", dep, "--notes", str(notes))
    assert listed["status"] == "refused" and listed["stage"] == "refused" and "\n" not in listed["error"]
    assert "waits for the librarian" not in err
    assert [p for p in _json(cli, "review", "list", "--notes", str(notes))[0] if p["deposit"] == dep] == []
    _json(cli, "librarian", "--notes", str(notes))  # nothing to do: it is out of the queue
    assert [r["action"] for r in rows(notes, "SELECT action FROM audit WHERE subject = ? AND action LIKE "
                                             "'librarian%'", (dep,))] == ["librarian-refused"]
    assert (note.read_bytes() if note.exists() else None) == left  # the note is left as it is


def test_a_shipped_row_naming_a_note_without_its_id_is_refused(cli, notes: Path) -> None:
    _deposit(cli, notes)  # the memory database exists
    ghost = str(uuid.uuid4())
    conn = sqlite3.connect(notes / "orgkit-data" / "memory.sqlite")
    with conn:
        conn.execute("INSERT INTO deposits(id, path, title, lane, via, actor, created, sha, meta, status) "
                     "VALUES (?, 'tangle.org', 't', 'agent', 'mcp', 'm', '2026', '0', '{}', 'failed')", (ghost,))
    conn.close()
    before = (notes / "tangle.org").read_bytes()
    for _ in range(2):
        _json(cli, "librarian", "--notes", str(notes))
    assert rows(notes, "SELECT status FROM deposits WHERE id = ?", (ghost,)) == [{"status": "refused"}]
    assert len(rows(notes, "SELECT * FROM audit WHERE subject = ? AND action = 'librarian-refused'", (ghost,))) == 1
    assert (notes / "tangle.org").read_bytes() == before


@pytest.mark.parametrize("key", ["ROAM_EXCLUDE", "roam_exclude", "ROAM_REFS", "ROAM_ALIASES", "header-args",
                                 "CATEGORY", "CUSTOM_ID", "EXPORT_FILE_NAME", "TAGS_ALL"])
def test_an_agent_cannot_name_a_property_org_acts_on(cli, notes: Path, key: str) -> None:
    before = sorted(p.relative_to(notes) for p in notes.rglob("*.org"))
    result = cli("deposit", "--notes", str(notes), "--title", "T", "--body", "x", "--meta", f"{key}=t",
                 "--no-process")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error == f"orgkit: error: --meta {key} is a property org or org-roam acts on"
    assert sorted(p.relative_to(notes) for p in notes.rglob("*.org")) == before


def test_an_ordinary_meta_key_still_makes_a_node(cli, notes: Path) -> None:
    dep, _ = _json(cli, "deposit", "--notes", str(notes), "--title", "Var", "--body", FINDING,
                   "--meta", "source=run-42")
    assert dep["status"] == "no-model"



def test_a_waiting_deposit_is_left_out_of_recent_as_search_leaves_it(cli, notes: Path) -> None:
    """What changed lately lists what search may answer from: a deposit no person admitted is not there."""
    dep, note = _deposit(cli, notes)
    listed, _ = _json(cli, "recent", "--notes", str(notes), "--limit", "50")
    assert note.exists() and note.name not in {Path(n["file"]).name for n in listed}
    _json(cli, "librarian", "--notes", str(notes))
    ids = [p["id"] for p in _json(cli, "review", "list", "--notes", str(notes))[0] if p["deposit"] == dep]
    _json(cli, "review", "accept", *ids, "--notes", str(notes))
    listed, _ = _json(cli, "recent", "--notes", str(notes), "--limit", "50")
    assert note.name in {Path(n["file"]).name for n in listed}

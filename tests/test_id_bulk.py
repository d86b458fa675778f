"""`orgkit id add` in bulk: a folder's (or the notes') files and headings, a dry run first, as Emacs writes IDs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import write_notes
from emacs_batch import batch_emacs
from test_edit import EMACS_ADD_IDS, normalise

FOLDER = {
    "agenda.org": "#+title: Agenda\n\n* TODO Dentist\nSCHEDULED: <2026-12-08 Tue>\n* Groceries\n",
    "projects/bread.org": "Notes on bread.\n* Starter\n:PROPERTIES:\n:ID:       have-one\n:END:\n** Feeding\n",
    "projects/data/attachment.org": "* Not a note (org-roam skips data/)\n",
}


def run(cli, *args: str):
    result = cli("id", "add", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_dry_run_counts_and_writes_nothing_then_the_real_run_writes_as_counted(cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", FOLDER)
    before = {p: p.read_bytes() for p in notes.rglob("*.org")}
    planned = run(cli, str(notes), "--files", "--all", "--dry-run")
    assert [(r["file"], r["line"], r["title"], r["id"]) for r in planned] == [
        ("agenda.org", 1, "", None), ("agenda.org", 6, "Dentist", None),
        ("agenda.org", 11, "Groceries", None), ("projects/bread.org", 1, "", None),
        ("projects/bread.org", 9, "Feeding", None)]
    assert {p: p.read_bytes() for p in notes.rglob("*.org")} == before
    human = cli("id", "add", str(notes), "--files", "--dry-run").stdout
    assert human.endswith("would give 2 ID(s) in 2 file(s) (dry run: nothing written)\n")

    given = run(cli, str(notes / "projects"), "--files")  # one folder, files only
    assert [(r["file"], r["line"]) for r in given] == [("bread.org", 1)]
    assert (notes / "projects/bread.org").read_text().startswith(f":PROPERTIES:\n:ID:       {given[0]['id']}\n")
    given = run(cli, str(notes), "--files", "--all")  # everything left
    assert [(r["file"], r["title"]) for r in given] == [
        ("agenda.org", ""), ("agenda.org", "Dentist"), ("agenda.org", "Groceries"), ("projects/bread.org", "Feeding")]
    assert (notes / "projects/data/attachment.org").read_bytes() == before[notes / "projects/data/attachment.org"]
    assert "have-one" in (notes / "projects/bread.org").read_text()
    assert cli("id", "add", str(notes), "--files", "--all").stdout == "nothing to do: every entry has an ID\n"
    nodes = json.loads(cli("nodes", "--notes", str(notes), "--json").stdout)
    assert len(nodes) == 6 and all(n["id"] for n in nodes)


def test_bulk_needs_a_target_and_a_line_names_a_file(cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", FOLDER)
    assert cli("id", "add", str(notes)).exit_code == 2
    assert cli("id", "add", str(notes), "--line", "2").exit_code == 2


def test_the_notes_dir_is_given_as_to_every_command_and_is_the_folder_by_default(cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", FOLDER)
    given = run(cli, "--files", "--notes", str(notes))  # no path: the notes dir --notes names
    assert [(r["file"], r["line"]) for r in given] == [("agenda.org", 1), ("projects/bread.org", 1)]
    one = run(cli, str(notes / "agenda.org"), "--line", "6", "--notes", str(notes))
    assert [(r["line"], r["title"]) for r in one] == [(6, "Dentist")]
    assert [d["title"] for d in json.loads(cli("read", one[0]["id"], "--notes", str(notes), "--json").stdout)] == \
        ["Dentist"]


# Emacs' own way, as test_edit runs it for headings, then the file's entry at its top.
EMACS_FILE_AND_HEADINGS = EMACS_ADD_IDS.replace(
    "      (save-buffer)", "      (goto-char (point-min))\n      (unless (org-id-get) (org-id-get-create))\n"
    "      (save-buffer)")


@pytest.mark.skipif(shutil.which("emacs") is None, reason="emacs is not installed")
def test_files_and_headings_get_ids_byte_for_byte_as_emacs_gives_them(cli, tmp_path: Path) -> None:
    text = FOLDER["agenda.org"]
    ours = write_notes(tmp_path / "ours", {"agenda.org": text})
    theirs = write_notes(tmp_path / "emacs", {"agenda.org": text})
    run(cli, str(ours), "--files", "--all")
    subprocess.run(batch_emacs("--eval", EMACS_FILE_AND_HEADINGS, str(theirs / "agenda.org")), check=True,
                   capture_output=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert normalise((ours / "agenda.org").read_bytes()) == normalise((theirs / "agenda.org").read_bytes())

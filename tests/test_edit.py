"""`orgkit new` and `orgkit id add`: byte-exact, atomic, safe next to Emacs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from orgkit.edit import add_ids_to_file, slugify
from orgkit.errors import OrgkitError
from orgkit.org import write as write_module
from orgkit.vault import Vault

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")

CASES = {
    "plain.org": "#+title: Plain\n* One\nbody\n** Two\n* Three\ntext\n",
    "planning.org": "* TODO Task\nSCHEDULED: <2026-12-02 Wed>\nnotes\n",
    "drawer.org": "* Has drawer\n:PROPERTIES:\n:CUSTOM: x\n:END:\ntext\n",
    "has-id.org": "* Already\n:PROPERTIES:\n:ID:       11111111-2222-4333-8444-555555555555\n:END:\n* Not yet\n",
    "no-newline.org": "intro\n* Last heading",
    "trailing.org": "* Only heading\n",
    "crlf.org": "* Dos\r\ntext\r\n** Child\r\n",
    "unicode.org": "* Café ☕ :tag:\nnaïve text\n",
}


def normalise(data: bytes) -> bytes:
    return UUID.sub("UUID", data.decode("utf-8")).encode("utf-8")


def test_slug_matches_org_roam() -> None:
    assert slugify("Héllo, World!  Again") == "hello_world_again"
    assert slugify("__C++ / Rust__") == "c_rust"


def test_new_note_is_an_org_roam_node(cli, tmp_path: Path) -> None:
    first = json.loads(cli("new", "First idea", "--tags", "a,b", "--body", "Some text.",
                           "--notes", str(tmp_path), "--json").stdout)
    second = json.loads(cli("new", "Second", "--link", first["id"], "--body", "-",
                            "--notes", str(tmp_path), "--json", input="From stdin.\n").stdout)
    assert re.fullmatch(r"\d{14}-first_idea\.org", first["file"])
    text = (tmp_path / second["file"]).read_text()
    assert text == (f":PROPERTIES:\n:ID:       {second['id']}\n:END:\n#+title: Second\n\n"
                    f"From stdin.\n\n[[id:{first['id']}][First idea]]\n")
    vault = Vault.load(tmp_path)
    node = vault.node(first["id"])
    assert (node.title, node.tags, node.level) == ("First idea", ["a", "b"], 0)
    assert [(l.source, l.dest) for l in vault.links] == [(second["id"], first["id"])]


def test_new_refuses_to_overwrite_and_unknown_link(cli, tmp_path: Path, monkeypatch) -> None:
    from datetime import datetime
    import orgkit.edit as edit
    fixed = datetime(2026, 12, 2, 12, 0, 0)
    edit.new_note(tmp_path, "Same", now=fixed)
    with pytest.raises(OrgkitError, match="already exists"):
        edit.new_note(tmp_path, "Same", now=fixed)
    result = cli("new", "X", "--link", "nope", "--notes", str(tmp_path))
    assert result.exit_code == 1 and "unknown ID: nope" in result.stderr
    assert len(list(tmp_path.glob("*.org"))) == 1


def test_id_add_all_changes_only_the_drawers(tmp_path: Path) -> None:
    path = tmp_path / "n.org"
    original = "#+title: N\n* A\ntext [[id:x][x]]\n* B :t:\nSCHEDULED: <2026-01-01 Thu>\nmore\n"
    path.write_text(original)
    path.chmod(0o640)
    added = add_ids_to_file(path)
    new = path.read_text()
    assert [a.title for a in added] == ["A", "B"]
    stripped = re.sub(r":PROPERTIES:\n:ID:       [0-9a-f-]{36}\n:END:\n", "", new)
    assert stripped == original
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    lines = new.split("\n")
    assert all(lines[a.line - 1].startswith("* ") for a in added)
    assert add_ids_to_file(path) == []  # nothing left to do, file untouched
    assert path.read_text() == new


def test_id_add_line_and_cli(cli, tmp_path: Path) -> None:
    path = tmp_path / "n.org"
    path.write_text("* A\n* B\nbody of B\n")
    result = cli("id", "add", str(path), "--line", "3", "--json")
    (row,) = json.loads(result.stdout)
    assert (row["title"], row["line"]) == ("B", 2)
    assert path.read_text().startswith("* A\n* B\n:PROPERTIES:\n:ID:")
    assert cli("id", "add", str(path)).exit_code == 2
    assert cli("id", "add", str(tmp_path / "missing.org"), "--all").exit_code == 1


def test_write_refuses_when_the_file_changed(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "n.org"
    path.write_text("* A\n")
    real = write_module.atomic_write

    def racing(target, data, *, expected):
        target.write_text("* A\nedited in Emacs meanwhile\n")
        real(target, data, expected=expected)

    monkeypatch.setattr("orgkit.edit.atomic_write", racing)
    with pytest.raises(OrgkitError, match="changed since it was read"):
        add_ids_to_file(path, line=1)
    assert path.read_text() == "* A\nedited in Emacs meanwhile\n"
    assert [p.name for p in tmp_path.iterdir()] == ["n.org"]


needs_emacs = pytest.mark.skipif(shutil.which("emacs") is None, reason="emacs is not installed")

EMACS_ADD_IDS = """
(progn
  (require 'org) (require 'org-id)
  (setq org-id-locations-file (expand-file-name "ids" temporary-file-directory))
  (dolist (file command-line-args-left)
    (with-current-buffer (find-file-noselect file)
      (goto-char (point-max))
      (while (re-search-backward org-outline-regexp-bol nil t)
        (save-excursion (unless (org-id-get) (org-id-get-create))))
      (save-buffer)))
  (setq command-line-args-left nil))
"""


@needs_emacs
def test_id_add_is_byte_identical_to_emacs(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "emacs"
    for d in (ours, theirs):
        d.mkdir()
        for name, text in CASES.items():
            (d / name).write_bytes(text.encode("utf-8"))
    for name in CASES:
        add_ids_to_file(ours / name)
    subprocess.run(["emacs", "--batch", "-q", "--eval", EMACS_ADD_IDS,
                    *[str(theirs / n) for n in CASES]],
                   check=True, capture_output=True, timeout=120,
                   env={**os.environ, "HOME": str(tmp_path)})
    for name in CASES:
        assert normalise((ours / name).read_bytes()) == normalise((theirs / name).read_bytes()), name


@needs_emacs
def test_new_and_id_add_files_index_in_org_roam(cli, tmp_path: Path) -> None:
    from roam import build_db, skip_unless_available  # org-roam's own database

    skip_unless_available()
    notes = tmp_path / "notes"
    notes.mkdir()
    made = json.loads(cli("new", "Made by orgkit", "--tags", "x", "--notes", str(notes),
                          "--json").stdout)
    (notes / "plain.org").write_text(CASES["plain.org"])
    added = add_ids_to_file(notes / "plain.org")
    roam = {n.id: n for n in build_db(notes).nodes}
    assert set(roam) == {made["id"], *(a.id for a in added)}
    assert (roam[made["id"]].title, roam[made["id"]].tags) == ("Made by orgkit", ["x"])
    assert {roam[a.id].title for a in added} == {"One", "Two", "Three"}

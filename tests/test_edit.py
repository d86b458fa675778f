"""`orgkit new` and `orgkit id add`: byte-exact, atomic, safe next to Emacs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from emacs_batch import batch_emacs
from orgkit.edit import add_ids_to_file
from orgkit.org.names import slugify
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


def test_new_never_collides_and_refuses_unknown_link(cli, tmp_path: Path) -> None:
    from datetime import datetime
    import orgkit.edit as edit
    fixed = datetime(2026, 12, 2, 12, 0, 0)
    first = edit.new_note(tmp_path, "Same", now=fixed)
    second = edit.new_note(tmp_path, "Same", now=fixed)
    third = edit.new_note(tmp_path, "Same", now=fixed)
    assert (first.file, second.file, third.file) == (
        "20261202120000-same.org", "20261202120000-same-2.org", "20261202120000-same-3.org")
    assert len({first.id, second.id, third.id}) == 3
    result = cli("new", "X", "--link", "nope", "--notes", str(tmp_path))
    assert result.exit_code == 1 and "unknown ID: nope" in result.stderr
    assert len(list(tmp_path.glob("*.org"))) == 3


def test_new_title_is_one_line(cli, tmp_path: Path) -> None:
    title = "Evil\n:ID: 00000000-0000-4000-8000-000000000000\n* Heading\r\tend\u2028x"
    made = json.loads(cli("new", title, "--notes", str(tmp_path), "--json").stdout)
    assert made["title"] == "Evil :ID: 00000000-0000-4000-8000-000000000000 * Heading end x"
    text = (tmp_path / made["file"]).read_text()
    assert text.count("\n") == 4 and text.count(":ID:") == 2  # the drawer's and the title's
    (node,) = Vault.load(tmp_path).nodes
    assert (node.id, node.title) == (made["id"], made["title"])
    assert cli("new", "\n\t\n", "--notes", str(tmp_path)).exit_code == 1


def test_new_long_titles_fit_the_file_system(cli, tmp_path: Path) -> None:
    for title in ("word " * 80, "é" * 300, "日本語" * 100):
        result = cli("new", title, "--notes", str(tmp_path), "--json")
        assert result.exit_code == 0, result.stderr
        name = json.loads(result.stdout)["file"]
        assert len(name.encode()) <= 255 and name.endswith(".org")
        name2 = json.loads(cli("new", title, "--notes", str(tmp_path), "--json").stdout)["file"]
        assert name2 != name and len(name2.encode()) <= 255
    assert len(Vault.load(tmp_path).nodes) == 6


def test_writer_refuses_files_that_are_not_org(cli, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("* Looks like a heading\n")
    result = cli("id", "add", str(readme), "--all")
    assert result.exit_code == 1 and "not an org file" in result.stderr
    assert "Traceback" not in result.stderr
    assert readme.read_text() == "* Looks like a heading\n"
    (tmp_path / "sneaky.org").symlink_to(readme)
    assert cli("id", "add", str(tmp_path / "sneaky.org"), "--all").exit_code == 1
    assert readme.read_text() == "* Looks like a heading\n"
    (tmp_path / "dir.org").mkdir()
    result = cli("id", "add", str(tmp_path / "dir.org"), "--all")
    assert result.exit_code == 1 and "not a regular file" in result.stderr


def test_symlinked_note_stays_a_symlink(tmp_path: Path) -> None:
    real_dir = tmp_path / "elsewhere"
    real_dir.mkdir()
    real = real_dir / "real.org"
    real.write_text("* A\n")
    real.chmod(0o600)
    link = tmp_path / "link.org"
    link.symlink_to(real)
    (added,) = add_ids_to_file(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert added.id in real.read_text()
    assert oct(real.stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in real_dir.iterdir()) == ["real.org"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "link.org"]


# One interpreter imports orgkit, then forks the racers: twenty separate processes, each
# opening and locking the file on its own, that start together (twenty interpreter
# start-ups cost more CPU than the writes themselves and spread the racers' starts).
RACERS = """
import os, sys, traceback
from pathlib import Path
from orgkit.edit import add_ids_to_file
from orgkit.org.write import update_note
path, workers, ops = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

def race(who):
    for k in range(ops):
        if k % 2:
            add_ids_to_file(path)
        else:
            update_note(path, lambda old: old + f"* {who}-{k}\\n".encode(), ids=None)

def child(who):
    try:
        race(who)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)

pids = []
for w in range(workers):
    pid = os.fork()
    if pid == 0:
        child(f"w{w}")
    pids.append(pid)
failed = [pid for pid in pids if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0]
sys.exit(f"{len(failed)} racer(s) failed" if failed else 0)
"""


def test_concurrent_id_add_and_appends_lose_nothing(tmp_path: Path) -> None:
    import sys
    path = tmp_path / "race.org"
    path.write_text("#+title: Race\n")
    workers, ops = 20, 50  # 1,000 writes in all, from 20 processes at once
    done = subprocess.run([sys.executable, "-c", RACERS, str(path), str(workers), str(ops)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    add_ids_to_file(path)
    text = path.read_text()
    headings = re.findall(r"^\* (\S+)$", text, re.M)
    expected = {f"w{w}-{k}" for w in range(workers) for k in range(0, ops, 2)}
    assert sorted(headings) == sorted(expected)  # every append, once
    assert len(set(UUID.findall(text))) == len(expected)  # every heading one ID
    assert [p.name for p in tmp_path.iterdir()] == ["race.org"]


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
    real = write_module._temp_copy

    def racing(target, data, mode):  # Emacs saves (taking no lock) while orgkit writes
        path.write_text("* A\nedited in Emacs meanwhile\n")
        return real(target, data, mode)

    monkeypatch.setattr(write_module, "_temp_copy", racing)
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
    subprocess.run(batch_emacs("--eval", EMACS_ADD_IDS, *[str(theirs / n) for n in CASES]),
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

"""Where a tangle keeps its records: never beside the org file, never in the deletable state dir;
the bytes of a target orgkit did not write are kept, not lost."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from orgkit.cli import main
from orgkit.tangle.journal import record_path

LIT = "#+begin_src python :tangle a.py\nx = 1\n#+end_src\n#+begin_src sh :tangle sub/b.sh :mkdirp yes\necho b\n#+end_src\n"


def tangle(*args: str):
    return CliRunner().invoke(main, ["tangle", *args])


def test_a_tangle_leaves_only_its_targets_beside_the_org_file(tmp_path: Path, user_state_home: Path) -> None:
    project = tmp_path / "dotfiles"
    project.mkdir()
    (project / "Emacs.org").write_text(LIT)
    assert tangle(str(project / "Emacs.org")).exit_code == 0
    assert tangle(str(project / "Emacs.org")).exit_code == 0  # a second run, with a record to compare
    left = sorted(p.relative_to(project).as_posix() for p in project.rglob("*"))
    assert left == ["Emacs.org", "a.py", "sub", "sub/b.sh"]
    assert record_path(project / "Emacs.org").is_relative_to(user_state_home / "orgkit" / "tangle")
    assert record_path(project / "Emacs.org").is_file()


def test_two_org_files_of_one_name_keep_separate_records(tmp_path: Path) -> None:
    one, two = tmp_path / "one" / "lit.org", tmp_path / "two" / "lit.org"
    assert record_path(one) != record_path(two)
    assert record_path(tmp_path / "one" / "." / "lit.org") == record_path(one)  # keyed by the resolved path


def test_a_foreign_target_is_kept_and_said_in_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.py").write_text("mine = True\n")
    Path("lit.org").write_text(LIT)
    result = tangle("lit.org")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("\n") == 1 and "a.py was not written by orgkit" in result.stderr
    backup = Path(result.stderr.rsplit(" kept in ", 1)[1].strip())
    assert backup.read_text() == "mine = True\n" and not backup.is_relative_to(tmp_path)
    assert Path("a.py").read_text() == "x = 1\n"
    again = tangle("lit.org")  # now orgkit wrote it: nothing more to keep
    assert again.exit_code == 0 and again.stderr == ""


def test_a_target_already_holding_the_new_bytes_is_not_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.py").write_text("x = 1\n")  # as Emacs would have tangled it
    Path("lit.org").write_text(LIT)
    result = tangle("lit.org")
    assert result.exit_code == 0 and result.stderr == ""


def test_forcing_over_a_hand_edit_keeps_the_edit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("lit.org").write_text(LIT)
    assert tangle("lit.org").exit_code == 0
    Path("a.py").write_text("x = 2  # by hand\n")
    result = tangle("lit.org", "--force")
    assert result.exit_code == 0 and "kept in" in result.stderr
    assert Path(result.stderr.rsplit(" kept in ", 1)[1].strip()).read_text() == "x = 2  # by hand\n"


def test_deleting_the_user_state_dir_loses_no_hand_edit(tmp_path: Path, monkeypatch, user_state_home: Path) -> None:
    monkeypatch.chdir(tmp_path)
    Path("lit.org").write_text(LIT)
    assert tangle("lit.org").exit_code == 0
    Path("a.py").write_text("x = 2  # by hand\n")
    shutil.rmtree(user_state_home / "orgkit")
    result = tangle("lit.org")  # no record any more: the edit is a foreign file, kept
    assert result.exit_code == 0 and "kept in" in result.stderr
    assert Path(result.stderr.rsplit(" kept in ", 1)[1].strip()).read_text() == "x = 2  # by hand\n"


def test_in_a_notes_dir_the_record_survives_deleting_the_state_dir(tmp_path: Path, monkeypatch,
                                                                    user_state_home: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "code").mkdir(parents=True)
    (notes / "orgkit.toml").write_text("")
    (notes / "code" / "lit.org").write_text(LIT)
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["index", "--no-embed", "--quiet", "--notes", "notes"]).exit_code == 0
    assert tangle("notes/code/lit.org").exit_code == 0
    # In the user's state dir, keyed by the notes dir: never in a folder that travels with the notes.
    assert record_path(notes / "code" / "lit.org").is_relative_to(user_state_home / "orgkit" / "tangle")
    assert not (notes / "orgkit-data" / "tangle").exists()
    (notes / "code" / "a.py").write_text("x = 2  # by hand\n")
    shutil.rmtree(notes / ".orgkit")  # the deletable state dir, index and all
    result = tangle("notes/code/lit.org")
    assert result.exit_code == 1 and "a.py changed since orgkit tangled it" in result.stderr
    assert (notes / "code" / "a.py").read_text() == "x = 2  # by hand\n"
    left = sorted(p.name for p in (notes / "code").iterdir())
    assert left == ["a.py", "lit.org", "sub"]

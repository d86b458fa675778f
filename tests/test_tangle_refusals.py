"""What orgkit's tangler refuses, and how it says so: one line naming the file, the line
and the block, and nothing written.  (What it does tangle is checked against Emacs in
test_tangle_emacs.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orgkit.tangle import NeedsEvaluation, TangleError, tangle


def _refusal(tmp_path: Path, text: str, cls: type[TangleError] = TangleError) -> str:
    org = tmp_path / "notes.org"
    org.write_text(text)
    with pytest.raises(cls) as info:
        tangle([org])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.org"], "a refused tangle writes nothing"
    message = str(info.value)
    assert message.startswith(f"{org}:") and "\n" not in message
    return message


@pytest.mark.parametrize(
    "text,expected",
    [
        ("#+NAME: para\n[[file:other.txt]]\n\n#+begin_src python :tangle a.py :var p=para\np\n#+end_src\n",
         ":var p=para: para is a link, whose target Org reads as the value"),
        ("#+NAME: c\n#+begin_comment\nx\n#+end_comment\n#+begin_src python :tangle a.py :var p=c\np\n#+end_src\n",
         "c is a comment block (Emacs fails too)"),
        ("#+begin_src python :tangle a.py :var p=other.org:tbl\np\n#+end_src\n",
         "into another file is not supported"),
        ("#+begin_src sql :tangle a.sql :var t=1\nselect $t;\n#+end_src\n",
         "orgkit does not write :var values into sql blocks"),
        ("#+NAME: te\n+---+\n| a |\n+---+\n\n#+begin_src python :tangle a.py :var l=te\nl\n#+end_src\n",
         "te is a table.el table, which orgkit does not read"),
        ("#+begin_src python :tangle a.py :var x\nx\n#+end_src\n",
         "is not NAME=VALUE"),
        ('#+begin_src python :tangle "unterminated\nx\n#+end_src\n',
         "Emacs cannot read it"),
        ('#+begin_src python :tangle "a\\0b"\nx\n#+end_src\n',
         "contains a NUL character"),
        ("#+begin_src python :tangle .\nx\n#+end_src\n", ":tangle . names a directory"),
        ("#+begin_src python :tangle out/\nx\n#+end_src\n", ":tangle out/ names a directory"),
        ("#+begin_src fortran :tangle a.f :comments link\nx\n#+end_src\n",
         "comments with its own function fortran-comment-region"),
    ],
)
def test_unsupported_is_refused_naming_the_block(tmp_path: Path, text: str, expected: str) -> None:
    message = _refusal(tmp_path, text)
    assert re.search(r":([0-9]+): block at line \1:", message)
    assert expected in message


@pytest.mark.parametrize(
    "text,culprit",
    [
        ("#+begin_src python :tangle (concat (symbol-name (read \"x\")) \".py\")\nx\n#+end_src\n", "(symbol-name (read \"x\"))"),
        ("#+NAME: run\n#+begin_src emacs-lisp\n1\n#+end_src\n#+begin_src python :tangle a.py :var x=run\nx\n#+end_src\n",
         ":var x=run: run is a source block"),
        ("#+NAME: run\n#+call: other()\n\n#+begin_src python :tangle a.py :var x=run\nx\n#+end_src\n",
         ":var x=run: run is a #+call line"),
        ("#+begin_src python :tangle a.py :var x=run(n=2)\nx\n#+end_src\n", "a call of a block needs evaluation"),
        ("#+begin_src python :tangle a.py :var x=(org-id-uuid)\nx\n#+end_src\n", "(org-id-uuid) is not a pure form"),
    ],
)
def test_evaluation_is_refused_naming_the_form(tmp_path: Path, text: str, culprit: str) -> None:
    message = _refusal(tmp_path, text, NeedsEvaluation)
    assert culprit in message and "evaluat" in message.split(":", 2)[2]


def test_non_utf8_file_with_non_ascii_output_is_refused(tmp_path: Path) -> None:
    """Emacs guesses the encoding of a file that is not UTF-8 (Latin-1 here) and writes the
    tangled text as UTF-8; orgkit does not guess, so it refuses rather than copy the bytes."""
    org = tmp_path / "notes.org"
    org.write_bytes(b"* Caf\xe9\n#+begin_src sh :tangle a.sh\necho caf\xe9\n#+end_src\n")
    with pytest.raises(TangleError) as info:
        tangle([org])
    assert "notes.org is not valid UTF-8" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.org"]


def test_a_folder_only_a_later_target_makes_fails_as_in_emacs_dry_run_too(tmp_path: Path) -> None:
    """Emacs makes a target's folder only for a target with :mkdirp, in turn: `build/` is missing
    when run.sh, first and without :mkdirp, is written. A dry run says so as the run would."""
    org = tmp_path / "notes.org"
    org.write_text("#+begin_src sh :tangle build/run.sh\nrun\n#+end_src\n"
                   "#+begin_src python :tangle build/main.py :mkdirp yes\nmain\n#+end_src\n")
    for dry_run in (True, False):
        with pytest.raises(TangleError) as info:
            tangle([org], dry_run=dry_run)
        assert str(info.value) == (f"cannot write {tmp_path}/build/run.sh: directory {tmp_path}/build does not "
                                   "exist: a later target's :mkdirp makes it only after this one is written, as in "
                                   "Emacs (add :mkdirp yes to create it)")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.org"]
    org.write_text("#+begin_src python :tangle build/main.py :mkdirp yes\nmain\n#+end_src\n"
                   "#+begin_src sh :tangle build/run.sh\nrun\n#+end_src\n")
    tangle([org])
    assert sorted(p.name for p in (tmp_path / "build").iterdir()) == ["main.py", "run.sh"]

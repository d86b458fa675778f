"""Differential tests: orgkit's tangle against Emacs' `org-babel-tangle-file`.

Each org file is copied into two sandboxes; batch Emacs (one process for all
files) tangles one, orgkit the other, and the resulting trees must match in
names, bytes and modes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from emacs_tangle import (
    CASES,
    CORPUS,
    NEEDS_EVALUATION,
    Sandbox,
    corpus_files,
    differences,
    emacs_available,
    make_sandbox,
    run_emacs,
    snapshot,
)
from orgkit.tangle import NeedsEvaluation, Options, TangleError, tangle

pytestmark = pytest.mark.skipif(not emacs_available(), reason="emacs is not installed (apt-get install emacs-nox)")

OWN_CASES = sorted(p.name for p in CASES.glob("*.org") if not p.name.startswith("needs_eval"))
EVAL_CASES = sorted(p.name for p in CASES.glob("needs_eval*.org"))
FAILS = CASES / "emacs_fails"

# Deliberate differences: files on which Emacs signals an error.  orgkit gives an error
# too (containing the text below) and writes nothing; the targets Emacs has already
# written when it fails are listed (its partial result, which orgkit never leaves).
EMACS_FAILS: dict[str, tuple[str, list[str]]] = {
    "lisp_signal.org": ("Emacs signals an error evaluating it: wrong-type-argument sequencep 1", []),
    "lua_number_key.org": ("ob-lua cannot write (1 2)", []),
    "missing_reference.org": ("Reference `nosuch' not found", []),
    "comment_block_reference.org": ("c is a comment block", []),
    "missing_directory.org": ("add :mkdirp yes", ["first.py"]),
    "mkdirp_later_target.org": ("a later target's :mkdirp makes it only after", []),
    "no_comment_syntax.org": ("no comment syntax is known for language 'text'", ["first.py"]),
    "noweb_comment_no_syntax.org": ("no comment syntax is known for language 'text'", []),
    "directory_target.org": (":tangle scripts/ names a directory", []),
    "unterminated_block.org": ("#+begin_src without its own #+end_src", []),
}


def _tree(sandbox: Sandbox) -> dict[str, tuple[bytes, int]]:
    """Both sandbox folders, every file either run leaves (orgkit's tangle records live in the
    user's state dir, outside both); absolute names of the sandbox itself (as in `:comments
    noweb` links) are written as <sandbox>, since the two runs live in different folders."""
    base = str(sandbox.root.parent).encode()
    tree = {f"repo/{k}": (data.replace(base, b"<sandbox>"), mode) for k, (data, mode) in snapshot(sandbox.root).items()}
    tree.update({f"home/{k}": (data.replace(base, b"<sandbox>"), mode) for k, (data, mode) in snapshot(sandbox.home).items()})
    return tree


def _orgkit_tangle(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        patch.setenv("HOME", str(sandbox.home))
        tangle([sandbox.org], Options(machine=True))  # the owner, as Emacs tangles for its user


@pytest.fixture(scope="module")
def emacs_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Sandbox, Sandbox, str | None]]:
    """Every case tangled by Emacs in one process; orgkit sandboxes prepared beside them."""
    base = tmp_path_factory.mktemp("tangle")
    jobs: dict[str, tuple[Sandbox, Sandbox]] = {}
    for name in OWN_CASES:
        source = base / "cases" / name
        source.mkdir(parents=True)
        (source / name).write_bytes((CASES / name).read_bytes())
        jobs[f"case:{name}"] = (make_sandbox(base / f"e-{name}", source, name), make_sandbox(base / f"o-{name}", source, name))
    for name in EMACS_FAILS:
        source = base / "fails" / name
        source.mkdir(parents=True)
        (source / name).write_bytes((FAILS / name).read_bytes())
        jobs[f"fails:{name}"] = (make_sandbox(base / f"fe-{name}", source, name), make_sandbox(base / f"fo-{name}", source, name))
    if CORPUS.is_dir():
        for i, rel in enumerate(f for f in corpus_files() if f not in NEEDS_EVALUATION):
            top, inner = rel.split("/", 1)
            jobs[f"corpus:{rel}"] = (
                make_sandbox(base / f"ce{i}", CORPUS / top, inner),
                make_sandbox(base / f"co{i}", CORPUS / top, inner),
            )
    errors = run_emacs([e for e, _ in jobs.values()], base / "jobs.txt")
    return {key: (e, o, errors[e.org]) for key, (e, o) in jobs.items()}


def _compare(key: str, runs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    emacs_box, orgkit_box, emacs_error = runs[key]
    assert emacs_error is None, f"Emacs failed to tangle {key}: {emacs_error}"
    _orgkit_tangle(orgkit_box, monkeypatch)
    problems = differences(_tree(emacs_box), _tree(orgkit_box))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", OWN_CASES)
def test_own_case_matches_emacs(name: str, emacs_runs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    _compare(f"case:{name}", emacs_runs, monkeypatch)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpora/literate is absent")
@pytest.mark.parametrize("rel", [f for f in (corpus_files() if CORPUS.is_dir() else []) if f not in NEEDS_EVALUATION])
def test_corpus_file_matches_emacs(rel: str, emacs_runs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    _compare(f"corpus:{rel}", emacs_runs, monkeypatch)


def test_every_failing_case_is_in_the_table() -> None:
    assert sorted(EMACS_FAILS) == sorted(p.name for p in FAILS.glob("*.org"))


@pytest.mark.parametrize("name", sorted(EMACS_FAILS))
def test_where_emacs_fails_orgkit_fails_and_writes_nothing(name: str, emacs_runs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    emacs_box, orgkit_box, emacs_error = emacs_runs[f"fails:{name}"]
    message, partial = EMACS_FAILS[name]
    assert emacs_error is not None, f"Emacs tangled {name} without an error"
    assert sorted(k for k in _tree(emacs_box) if not k.endswith(".org")) == [f"repo/{p}" for p in partial]
    before = _tree(orgkit_box)
    with pytest.raises(TangleError) as info:
        _orgkit_tangle(orgkit_box, monkeypatch)
    assert message in str(info.value)
    assert _tree(orgkit_box) == before, "a failed tangle must write nothing"


def _needs_eval_sources() -> list[tuple[Path, Path]]:
    found = [(CASES / name, CASES) for name in EVAL_CASES]
    if CORPUS.is_dir():
        found += [(CORPUS / rel, CORPUS / rel.split("/", 1)[0]) for rel in sorted(NEEDS_EVALUATION)]
    return found


@pytest.mark.parametrize("org,root", _needs_eval_sources(), ids=lambda p: p.name if isinstance(p, Path) else str(p))
def test_files_needing_evaluation_get_a_clear_error(org: Path, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_sandbox(tmp_path, root, str(org.relative_to(root)))
    before = _tree(box)
    with pytest.raises(NeedsEvaluation) as info:
        _orgkit_tangle(box, monkeypatch)
    message = str(info.value)
    assert str(box.org) in message and "evaluat" in message.split(str(box.org), 1)[1]
    assert f":{message.split(':')[1]}:" in message and message.split(":")[1].isdigit()
    assert _tree(box) == before, "a refused tangle must write nothing"

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
from orgkit.tangle import NeedsEvaluation, tangle

pytestmark = pytest.mark.skipif(not emacs_available(), reason="emacs is not installed (apt-get install emacs-nox)")

OWN_CASES = sorted(p.name for p in CASES.glob("*.org") if not p.name.startswith("needs_eval"))
EVAL_CASES = sorted(p.name for p in CASES.glob("needs_eval*.org"))


def _tree(sandbox: Sandbox) -> dict[str, tuple[bytes, int]]:
    """The files of a sandbox, without orgkit's own tangle records."""
    tree = {f"repo/{k}": v for k, v in snapshot(sandbox.root).items()
            if "/.orgkit/" not in f"/{k}"}
    tree.update({f"home/{k}": v for k, v in snapshot(sandbox.home).items()})
    return tree


def _orgkit_tangle(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        patch.setenv("HOME", str(sandbox.home))
        tangle([sandbox.org])


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
    assert str(box.org) in message and "evaluat" in message
    assert f":{message.split(':')[1]}:" in message and message.split(":")[1].isdigit()
    assert _tree(box) == before, "a refused tangle must write nothing"

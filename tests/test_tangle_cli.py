"""The tangle and detangle commands: dry runs, safety, --check, JSON, detangle, tangle.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from orgkit.cli import main

REPO = Path(__file__).resolve().parents[1]


def _org(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _org(
        tmp_path / "notes" / "lit.org",
        """\
        * Code
        #+begin_src python :tangle out.py :comments link
        def f():
            return 1
        #+end_src

        #+begin_src sh :tangle run.sh :shebang "#!/bin/sh"
        echo hi
        #+end_src
        """,
    )
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_dry_run_lists_targets_and_writes_nothing(project: Path) -> None:
    code, out, _ = run("tangle", "notes/lit.org", "--dry-run", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["written"] is False
    assert [(t["target"], t["mode"], t["outside"]) for t in data["targets"]] == [
        ("notes/out.py", f"{0o666 & ~_umask():04o}", False),
        ("notes/run.sh", "0755", False),
    ]
    assert data["targets"][0]["bytes"] == len((_tangled_out()).encode())
    assert not (project / "notes" / "out.py").exists()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _tangled_out() -> str:
    return "# [[file:lit.org::*Code][Code:1]]\ndef f():\n    return 1\n# Code:1 ends here\n"


def test_tangle_writes_bytes_and_modes(project: Path) -> None:
    code, out, _ = run("tangle", "notes/lit.org")
    assert code == 0 and "notes/out.py" in out
    assert (project / "notes" / "out.py").read_text() == _tangled_out()
    assert (project / "notes" / "run.sh").stat().st_mode & 0o777 == 0o755


def test_outside_targets_are_flagged_and_refused_with_confine(project: Path) -> None:
    _org(
        project / "notes" / "escape.org",
        """\
        #+begin_src python :tangle ../outside.py
        x = 1
        #+end_src
        #+begin_src python :tangle inside.py
        y = 2
        #+end_src
        """,
    )
    code, out, err = run("tangle", "notes/escape.org", "--dry-run", "--json")
    assert code == 0
    flags = {t["target"]: t["outside"] for t in json.loads(out)["targets"]}
    assert flags == {"outside.py": True, "notes/inside.py": False}
    assert "outside" in err
    code, out, err = run("tangle", "notes/escape.org", "--dry-run")
    assert "[outside the org file's directory]" in out
    code, out, err = run("tangle", "notes/escape.org", "--confine")
    assert code == 1 and "--confine" in err and "Traceback" not in err
    assert not (project / "outside.py").exists() and not (project / "notes" / "inside.py").exists()


def test_a_failing_target_means_nothing_is_written(project: Path) -> None:
    _org(
        project / "notes" / "half.org",
        """\
        #+begin_src python :tangle first.py
        x = 1
        #+end_src
        #+begin_src python :tangle missing-dir/second.py
        y = 2
        #+end_src
        """,
    )
    code, _, err = run("tangle", "notes/half.org")
    assert code == 1 and err.count("\n") == 1 and "mkdirp" in err
    assert sorted(p.name for p in (project / "notes").iterdir() if p.name != ".orgkit") == ["half.org", "lit.org"]


def test_evaluation_is_refused_with_file_line_and_block(project: Path) -> None:
    _org(
        project / "notes" / "lisp.org",
        """\
        * H
        #+NAME: computed
        #+begin_src python :tangle (concat (org-id-uuid) ".py")
        x = 1
        #+end_src
        """,
    )
    code, _, err = run("tangle", "notes/lisp.org")
    assert code == 1
    assert "lisp.org:3:" in err and "computed" in err and "evaluat" in err and "(org-id-uuid)" in err
    assert not list((project / "notes").glob("*.py"))


def test_check_reports_stale_targets(project: Path) -> None:
    assert run("tangle", "notes/lit.org")[0] == 0
    code, out, _ = run("tangle", "--check", "notes/lit.org")
    assert code == 0 and "up to date" in out
    (project / "notes" / "out.py").write_text("edited\n")
    (project / "notes" / "run.sh").chmod(0o644)
    code, out, _ = run("tangle", "--check", "notes/lit.org", "--json")
    assert code == 1
    stale = {s["target"]: s["reason"] for s in json.loads(out)["stale"]}
    assert stale == {"notes/out.py": "content differs", "notes/run.sh": "mode is 644, expected 755"}


def test_detangle_carries_edits_back_and_reports_unmappable_blocks(project: Path) -> None:
    org = _org(
        project / "notes" / "det.org",
        """\
        * Code
        #+begin_src python :tangle det.py :comments link
          def f():
              return 1
        #+end_src

        #+NAME: assembled
        #+begin_src python :tangle det.py :comments link :noweb yes
          <<piece>>
        #+end_src

        #+NAME: piece
        #+begin_src python
          x = 1
        #+end_src
        """,
    )
    assert run("tangle", "notes/det.org")[0] == 0
    code_file = project / "notes" / "det.py"
    code_file.write_text(code_file.read_text().replace("return 1", "return 2").replace("x = 1", "x = 3"))
    code, out, _ = run("detangle", "notes/det.py", "--json")
    assert code == 1
    data = json.loads(out)
    assert [u["block"] for u in data["updated"]] == ["Code:1"]
    assert [u["block"] for u in data["unmapped"]] == ["assembled"]
    text = org.read_text()
    assert "      return 2\n" in text and "<<piece>>" in text and "x = 1" in text
    assert run("tangle", "--check", "notes/det.org")[0] == 1  # the noweb edit is still only in det.py
    code_file.write_text(code_file.read_text().replace("x = 3", "x = 1"))
    assert run("tangle", "--check", "notes/det.org")[0] == 0


def test_detangle_refuses_when_the_org_file_changes_underneath(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    org = _org(
        project / "notes" / "race.org",
        """\
        #+begin_src python :tangle race.py :comments link
        a = 1
        #+end_src
        """,
    )
    assert run("tangle", "notes/race.org")[0] == 0
    code_file = project / "notes" / "race.py"
    code_file.write_text(code_file.read_text().replace("a = 1", "a = 2"))
    real_read = Path.read_bytes
    calls = {"n": 0}

    def racing_read(self: Path) -> bytes:
        data = real_read(self)
        if self == org:
            calls["n"] += 1
            if calls["n"] == 3:  # the re-read just before the rename
                return data + b"# edited elsewhere\n"
        return data

    monkeypatch.setattr(Path, "read_bytes", racing_read)
    code, _, err = run("detangle", "notes/race.py")
    monkeypatch.undo()
    assert code == 1 and "changed while detangling" in err
    assert "a = 1" in org.read_text()
    assert not [p for p in (project / "notes").iterdir() if "orgkit-tmp" in p.name]


def test_tangle_py_runs_from_a_checkout_without_install(project: Path) -> None:
    env = dict(os.environ, PYTHONPATH="")
    # -S: no site-packages, so the installed orgkit (and click) cannot be what runs.
    proc = subprocess.run(
        [sys.executable, "-S", str(REPO / "tangle.py"), str(project / "notes" / "lit.org")],
        env=env,
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert proc.returncode == 0, proc.stderr
    assert (project / "notes" / "out.py").read_text() == _tangled_out()


def test_usage_error_exits_2(project: Path) -> None:
    assert run("tangle")[0] == 2


BLOCK = "#+begin_src sh :tangle made.sh\necho made\n#+end_src\n"


@pytest.mark.parametrize("name", ["README.md", "notes.txt", "secret.org.gpg"])
def test_a_file_that_is_not_org_is_refused_in_one_line_unless_asked(tmp_path: Path, name: str) -> None:
    source = tmp_path / name
    source.write_text(BLOCK)
    refused = subprocess.run([sys.executable, "-c", "from orgkit.cli import main; main()", "tangle", name],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (f"orgkit: error: {name} is not an org file (.org); give --any-file to tangle it "
                              "anyway\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    forced = CliRunner().invoke(main, ["tangle", str(source), "--any-file", "--json"])
    assert forced.exit_code == 0, forced.stderr
    assert (tmp_path / "made.sh").read_text() == "echo made\n"


def test_an_org_file_with_no_blocks_to_tangle_says_so(tmp_path: Path) -> None:
    org = _org(tmp_path / "plain.org", "* Notes\n#+begin_src sh\necho not tangled\n#+end_src\n")
    for extra in ([], ["--dry-run"], ["--check"]):
        result = CliRunner().invoke(main, ["tangle", str(org), "--json", *extra])
        assert result.exit_code == 0, result.stderr
        assert result.stderr == "orgkit: warning: no blocks to tangle\n"
        doc = json.loads(result.stdout)
        assert doc["targets"] == [] and doc["nothing"] is True and doc.get("written", False) is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.org"]


def test_serve_and_mcp_refuse_and_report_alike(tmp_path: Path) -> None:
    """The tangle operation is declared once: serve and MCP (tangle_plan) answer as the command line."""
    import anyio
    from mcp import Client

    from orgkit.mcp import build_server
    from orgkit.ops import OpContext
    from orgkit.serve import handle

    notes = tmp_path / "notes"
    _org(notes / "plain.org", "* Notes\n")
    (notes / "README.md").write_text(BLOCK)
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    refused = handle(ctx, json.dumps({"op": "tangle", "files": ["README.md"]}))
    assert refused == {"error": "README.md is not an org file (.org); give any_file to tangle it anyway"}
    empty = handle(ctx, json.dumps({"op": "tangle", "files": ["plain.org"]}))
    assert empty["result"] == {"written": False, "targets": [], "nothing": True}
    assert empty["warnings"] == ["no blocks to tangle"]

    async def over_mcp():
        async with Client(build_server(ctx, warm_up=False)) as client:
            return (await client.call_tool("tangle_plan", {"files": ["README.md"]}),
                    await client.call_tool("tangle_plan", {"files": ["plain.org"]}))

    bad, none = anyio.run(over_mcp)
    assert bad.is_error and "README.md is not an org file (.org)" in bad.content[0].text
    assert json.loads(none.content[0].text)["warnings"] == ["no blocks to tangle"]
    assert sorted(p.name for p in notes.iterdir()) == ["README.md", "plain.org"]

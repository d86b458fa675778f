"""A tangle is all-or-nothing under SIGKILL, and never overwrites a target edited by hand."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from orgkit.cli import main
from orgkit.tangle.journal import record_path

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]
TARGETS = [f"out/t{k}.py" for k in range(6)]


def literate(version: str) -> str:
    """Six targets, each big enough that writing them all takes a while."""
    filler = "".join(f"line_{i} = '{version}'\n" for i in range(4_000))
    blocks = "".join(f"* T{k}\n#+begin_src python :tangle {name} :mkdirp yes\nVERSION = '{version}'\n"
                     f"{filler}#+end_src\n" for k, name in enumerate(TARGETS))
    return f"#+title: Lit\n{blocks}"


def versions(root: Path) -> set[str | None]:
    found = set()
    for name in TARGETS:
        path = root / name
        found.add(path.read_text().split("\n", 1)[0] if path.exists() else None)
    return found


def leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if "orgkit-tmp" in p.name or p.name.startswith(".record-")]


def test_killed_tangles_leave_all_old_or_all_new_targets(tmp_path: Path) -> None:
    """Kills at moments no exact-point test names (planning, the record writes, the clean-up),
    each recovered by another mode; the exact points are tested below."""
    org = tmp_path / "lit.org"
    org.write_text(literate("A"))
    subprocess.run([*ORGKIT, "tangle", str(org)], check=True, capture_output=True)
    started = time.perf_counter()
    subprocess.run([*ORGKIT, "tangle", "--dry-run", str(org)], check=True, capture_output=True)
    full = time.perf_counter() - started
    rng = random.Random(10)
    current = "A"
    for kill in range(6):
        new = "B" if current == "A" else "A"
        org.write_text(literate(new))
        proc = subprocess.Popen([*ORGKIT, "tangle", str(org)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 1.6) * full)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        mode = ["--dry-run", "--check", "--json"][kill % 3]
        subprocess.run([*ORGKIT, "tangle", mode, str(org)], capture_output=True)  # finishes or undoes it
        seen = versions(tmp_path)
        assert seen in ({f"VERSION = '{current}'"}, {f"VERSION = '{new}'"}), (kill, seen)
        assert leftovers(tmp_path) == [], kill
        assert "journal" not in json.loads(record_path(org).read_text())
        current = "A" if seen == {"VERSION = 'A'"} else "B"


# A child that runs the CLI and kills itself with SIGKILL at an exact point of a run:
# before staging the Nth temporary file, or before the Nth rename into place.
CRASHER = """
import os, signal, sys
import orgkit.tangle.write as write
phase, nth = sys.argv[1], int(sys.argv[2])
calls = []
def crash_on_nth():
    calls.append(1)
    if len(calls) == nth:
        os.kill(os.getpid(), signal.SIGKILL)
if phase == "record":  # before the Nth rename of the org file's record into place
    real_replace = os.replace
    def replace(src, dst):
        if str(dst).endswith(".json"):
            crash_on_nth()
        return real_replace(src, dst)
    os.replace = replace
elif phase == "stage":
    real_stage = write._stage
    def stage(*args):
        crash_on_nth()
        return real_stage(*args)
    write._stage = stage
else:
    real_replace = os.replace
    def replace(src, dst):
        if ".orgkit-tmp-" in str(src):
            crash_on_nth()
        return real_replace(src, dst)
    os.replace = replace
from orgkit.cli import main
main(sys.argv[3:])
"""


@pytest.mark.parametrize("phase, nth, survivor", [("stage", 1, "A"), ("stage", 4, "A"),
                                                  ("replace", 1, "B"), ("replace", 4, "B")])
def test_a_tangle_killed_at_an_exact_point_is_undone_or_finished(tmp_path: Path, phase: str, nth: int,
                                                                 survivor: str) -> None:
    org = tmp_path / "lit.org"
    org.write_text(literate("A"))
    subprocess.run([*ORGKIT, "tangle", str(org)], check=True, capture_output=True)
    org.write_text(literate("B"))
    killed = subprocess.run([sys.executable, "-c", CRASHER, phase, str(nth), "tangle", str(org)],
                            capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    assert "journal" in json.loads(record_path(org).read_text())
    if phase == "replace" and nth == 4:  # killed half-way through the renames
        assert versions(tmp_path) == {"VERSION = 'A'", "VERSION = 'B'"}
    recovered = subprocess.run([*ORGKIT, "tangle", "--dry-run", str(org)], capture_output=True, text=True)
    assert recovered.returncode == 0, recovered.stderr
    said = "finished an interrupted tangle" if survivor == "B" else "undid an interrupted tangle"
    assert said in recovered.stderr
    assert versions(tmp_path) == {f"VERSION = '{survivor}'"}
    assert leftovers(tmp_path) == []
    assert "journal" not in json.loads(record_path(org).read_text())


def test_a_target_edited_by_hand_is_not_overwritten(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("lit.org").write_text("#+begin_src python :tangle a.py\nx = 1\n#+end_src\n"
                               "#+begin_src python :tangle b.py\ny = 1\n#+end_src\n")
    runner = CliRunner()
    assert runner.invoke(main, ["tangle", "lit.org"]).exit_code == 0
    Path("a.py").write_text("x = 2  # fixed by hand\n")
    Path("lit.org").write_text(Path("lit.org").read_text().replace("y = 1", "y = 3"))
    result = runner.invoke(main, ["tangle", "lit.org"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "a.py changed since orgkit tangled it" in result.stderr and "detangle" in result.stderr
    assert "--force" in result.stderr
    assert (Path("a.py").read_text(), Path("b.py").read_text()) == ("x = 2  # fixed by hand\n", "y = 1\n")
    assert runner.invoke(main, ["tangle", "lit.org", "--force"]).exit_code == 0
    assert (Path("a.py").read_text(), Path("b.py").read_text()) == ("x = 1\n", "y = 3\n")
    assert runner.invoke(main, ["tangle", "lit.org"]).exit_code == 0  # its own output is no edit


def test_a_run_that_was_never_committed_is_undone(tmp_path: Path) -> None:
    from orgkit.tangle.journal import read_record, write_record

    org = tmp_path / "lit.org"
    org.write_text("#+begin_src python :tangle a.py\nx = 1\n#+end_src\n")
    assert CliRunner().invoke(main, ["tangle", str(org)]).exit_code == 0
    temp = tmp_path / ".orgkit-tmp-dead-0"
    temp.write_text("x = 99\n")
    record = read_record(org)
    record["journal"] = {"state": "prepare", "orgs": [str(org)], "entries": [
        {"org": str(org), "key": "a.py", "target": str(tmp_path / "a.py"), "temp": str(temp),
         "digest": "0"}]}
    write_record(org, record)
    assert CliRunner().invoke(main, ["tangle", "--check", str(org)]).exit_code == 0
    assert not temp.exists() and (tmp_path / "a.py").read_text() == "x = 1\n"


def test_a_target_that_became_a_directory_after_the_crash_is_named_not_fatal(tmp_path: Path) -> None:
    org = tmp_path / "lit.org"
    org.write_text(literate("A"))
    subprocess.run([*ORGKIT, "tangle", str(org)], check=True, capture_output=True)
    org.write_text(literate("B"))
    killed = subprocess.run([sys.executable, "-c", CRASHER, "replace", "1", "tangle", str(org)],
                            capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    blocked = tmp_path / TARGETS[0]
    blocked.unlink()
    (blocked / "inside").mkdir(parents=True)
    recovered = subprocess.run([*ORGKIT, "tangle", "--dry-run", str(org)], capture_output=True, text=True)
    # The interrupted run is closed first; then this run refuses the directory, in one line.
    assert recovered.returncode == 1 and recovered.stderr.count("\n") == 1, recovered.stderr
    assert "out/t0.py names a directory" in recovered.stderr
    assert blocked.is_dir()
    assert {(tmp_path / t).read_text().split("\n", 1)[0] for t in TARGETS[1:]} == {"VERSION = 'B'"}
    assert leftovers(tmp_path) == [] and "journal" not in json.loads(record_path(org).read_text())


@pytest.mark.parametrize("nth, mode, survivor", [(1, "--check", "A"), (2, "--json", "B"), (3, "--dry-run", "B")])
def test_a_tangle_killed_while_writing_its_record_is_undone_or_finished(tmp_path: Path, nth: int, mode: str,
                                                                       survivor: str) -> None:
    """Killed before the record's Nth rename: 1 the journal's prepare, 2 its commit, 3 its
    closing; recovered by each mode (a --json tangle then writes B itself), with no stray record
    file left."""
    org = tmp_path / "lit.org"
    small = "".join(f"#+begin_src python :tangle {name} :mkdirp yes\nVERSION = '{{v}}'\n#+end_src\n"
                    for name in TARGETS[:3])
    org.write_text(small.format(v="A"))
    subprocess.run([*ORGKIT, "tangle", str(org)], check=True, capture_output=True)
    org.write_text(small.format(v="B"))
    killed = subprocess.run([sys.executable, "-c", CRASHER, "record", str(nth), "tangle", str(org)],
                            capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    recovered = subprocess.run([*ORGKIT, "tangle", mode, str(org)], capture_output=True, text=True)
    assert recovered.returncode == (1 if mode == "--check" else 0), recovered.stderr
    found = {(tmp_path / name).read_text().split("\n", 1)[0] for name in TARGETS[:3]}
    assert found == {f"VERSION = '{survivor}'"}
    assert leftovers(tmp_path) == [] and "journal" not in json.loads(record_path(org).read_text())
    assert [p.name for p in record_path(org).parent.iterdir() if p.name.endswith(".tmp")] == []

"""A tangle is all-or-nothing under SIGKILL, and never overwrites a target edited by hand."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

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
    org = tmp_path / "lit.org"
    org.write_text(literate("A"))
    subprocess.run([*ORGKIT, "tangle", str(org)], check=True, capture_output=True)
    started = time.perf_counter()
    subprocess.run([*ORGKIT, "tangle", "--dry-run", str(org)], check=True, capture_output=True)
    full = time.perf_counter() - started
    rng = random.Random(10)
    current, interrupted = "A", 0
    for kill in range(40):
        new = "B" if current == "A" else "A"
        org.write_text(literate(new))
        proc = subprocess.Popen([*ORGKIT, "tangle", str(org)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 1.6) * full)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        journal = json.loads(record_path(org).read_text()).get("journal")
        interrupted += journal is not None
        mode = ["--dry-run", "--check", "--json"][kill % 3]
        subprocess.run([*ORGKIT, "tangle", mode, str(org)], capture_output=True)  # finishes or undoes it
        seen = versions(tmp_path)
        assert seen in ({f"VERSION = '{current}'"}, {f"VERSION = '{new}'"}), (kill, seen)
        assert leftovers(tmp_path) == [], kill
        assert "journal" not in json.loads(record_path(org).read_text())
        current = "A" if seen == {"VERSION = 'A'"} else "B"
    print(f"{interrupted} of 40 kills interrupted a run")
    assert interrupted >= 1  # some kills did land inside a run


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

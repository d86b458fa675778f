"""The index under real processes: killed mid-update, and several at once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import shared_path

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index
from test_index import assert_same_index, dump, fresh_dump

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([*ORGKIT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=os.environ.copy())


@pytest.fixture(scope="module")
def reference(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """braindump indexed from scratch with the tiny model, once for every test here (the
    corpus is only read: the index goes to a state dir of its own)."""
    from tiny_model import MODEL_NAME

    root = shared_path("corpora", "braindump")
    config = load(root, env={"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir)})
    return fresh_dump(root, tmp_path_factory.mktemp("fresh"), Embedder.from_config(config))


def test_killed_index_runs_leave_an_index_the_next_run_completes(braindump: Path, tiny_model: Path,
                                                                 reference: dict) -> None:
    db = braindump / ".orgkit" / "index.sqlite"
    file_count = len(list(braindump.rglob("*.org")))
    for delay in (0.3, 0.8, 1.3, 1.9, 2.5):
        proc = start("index", "--notes", str(braindump), "--rebuild" if delay == 0.3 else "--json")
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if db.exists():
            with sqlite3.connect(db) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
                if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                    continue  # killed before the schema's one transaction committed
                # the files, nodes and passages of one update commit together, or not at all
                assert conn.execute("SELECT count(*) FROM files").fetchone()[0] in (0, file_count)
    finished = subprocess.run([*ORGKIT, "index", "--notes", str(braindump), "--json"],
                              capture_output=True, text=True, check=True)
    assert json.loads(finished.stdout)["pending"] == 0
    assert_same_index(dump(Index.at(braindump)), reference)


def test_concurrent_index_runs_take_turns(braindump: Path, tiny_model: Path, reference: dict) -> None:
    runs = [start("index", "--notes", str(braindump), "--json") for _ in range(2)]
    time.sleep(0.2)
    reader = subprocess.run([*ORGKIT, "search", "--notes", str(braindump), "--mode", "lexical",
                             "--json", "reinforcement learning"], capture_output=True, text=True)
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert reader.returncode == 0, reader.stderr
    stats = [json.loads(out) for out, _ in outputs]
    assert sorted(s["parsed"] for s in stats)[0] == 0  # the second found nothing left to do
    assert any("waiting" in err for _, err in outputs)
    assert_same_index(dump(Index.at(braindump)), reference)

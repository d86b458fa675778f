"""The memory flow under real processes: concurrent deposits and SIGKILLs at any point."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_as_process
from memory_notes import FINDING, NOWEB, TANGLE, make_notes, rows

ORGKIT = [str(Path(sys.executable).with_name("orgkit"))]

# A child that runs the CLI with the note writer wrapped: the process kills itself
# with SIGKILL just before (or after) the Nth file write, a crash at an exact point.
CRASHER = """
import os, signal, sys
module, when, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
import importlib
target = importlib.import_module(module)
real = target.atomic_write
calls = []
def crashing(path, data, *, expected, ids):
    calls.append(path)
    if len(calls) == nth and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, data, expected=expected, ids=ids)
    if len(calls) == nth and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)
target.atomic_write = crashing
from orgkit.cli import main
main(sys.argv[4:])
"""


@pytest.fixture
def env(offline_env: dict) -> dict:
    return offline_env


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return make_notes(tmp_path / "notes")


def orgkit(notes: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*ORGKIT, *args, "--notes", str(notes)], env=env, capture_output=True,
                          text=True, timeout=120)


def crash(notes: Path, env: dict, module: str, when: str, nth: int, *args: str) -> int:
    proc = subprocess.run([sys.executable, "-c", CRASHER, module, when, str(nth), *args, "--notes", str(notes)],
                          env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode


def deposit_invariants(notes: Path) -> None:
    """Every note under deposits/ has its deposit row and audit record; nothing half-written."""
    assert rows(notes, "SELECT id FROM deposits WHERE status = 'writing'") == []
    audited = {r["subject"] for r in rows(notes, "SELECT subject FROM audit WHERE action IN "
                                                 "('deposit', 'deposit-repaired')")}
    known = {r["path"]: r["id"] for r in rows(notes, "SELECT id, path FROM deposits")}
    folder = notes / "deposits"
    files = sorted(p for p in folder.glob("*.org") if ":DEPOSITED_VIA: librarian" not in p.read_text()) \
        if folder.exists() else []
    for path in files:
        rel = path.relative_to(notes).as_posix()
        assert rel in known, f"{rel} has no deposit record"
        assert known[rel] in audited and known[rel] in path.read_text()
    assert set(known) == {p.relative_to(notes).as_posix() for p in files}
    assert not list(folder.glob(".orgkit-*.tmp")) if folder.exists() else True


def batch_invariants(notes: Path) -> None:
    """Every batch applied whole (files at their after text) or rolled back whole.

    A later batch may change a file an earlier one wrote, so each file is checked
    against the last applied batch that touched it."""
    accepted_text: dict[str, str | None] = {}
    for batch in rows(notes, "SELECT * FROM batches ORDER BY rowid"):
        assert batch["state"] in ("applied", "rolled-back"), batch["state"]
        if batch["state"] == "applied" and not batch["undone_by"]:
            accepted_text.update({item["path"]: item["after"] for item in batch["plan"]})
        statuses = {r["status"] for r in rows(notes, "SELECT status FROM proposals WHERE batch = ?",
                                              (batch["id"],))}
        if batch["state"] == "rolled-back":
            assert statuses <= {"pending"} or not statuses
    for rel, text in accepted_text.items():
        path = notes / rel
        assert (path.read_text() if path.exists() else None) == text, f"{rel} not at its accepted text"
    accepted = rows(notes, "SELECT p.id FROM proposals p LEFT JOIN batches b ON b.id = p.batch "
                           "WHERE p.status = 'accepted' AND (b.state IS NULL OR b.state != 'applied')")
    assert accepted == []


def test_eight_concurrent_deposits_land_with_distinct_files_and_audit_records(notes: Path, env: dict) -> None:
    procs = [subprocess.Popen([*ORGKIT, "deposit", "--notes", str(notes), "--title", "Same title",
                               "--body", f"finding number {i}", "--no-process", "--json"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(8)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    deposits = [json.loads(o) for o, _ in outs]
    assert len({d["id"] for d in deposits}) == 8 and len({d["path"] for d in deposits}) == 8
    for i, d in enumerate(deposits):
        assert f"finding number {i}" in (notes / d["path"]).read_text()
    assert len(rows(notes, "SELECT * FROM audit WHERE action = 'deposit'")) == 8
    deposit_invariants(notes)


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_deposit_killed_around_its_file_write_is_repaired(notes: Path, env: dict, when: str) -> None:
    code = crash(notes, env, "orgkit.memory.deposit", when, 1, "deposit", "--title", "Killed",
                 "--body", FINDING, "--no-process")
    assert code == -signal.SIGKILL
    assert rows(notes, "SELECT status FROM deposits") == [{"status": "writing"}]
    listed = json.loads(orgkit(notes, env, "deposits", "--json").stdout)
    deposit_invariants(notes)
    if when == "after":  # the note was written whole: kept, with its audit record, waiting for the librarian
        assert len(listed) == 1 and listed[0]["status"] == "pending"
        assert rows(notes, "SELECT action FROM audit")[0]["action"] == "deposit-repaired"
    else:
        assert listed == [] and rows(notes, "SELECT action FROM audit")[0]["action"] == "deposit-abandoned"


def test_deposits_killed_at_random_moments_leave_no_note_without_its_audit_record(notes: Path, env: dict) -> None:
    """Kills between the exact points around the file write tested above (start-up, the rows,
    the proposals)."""
    rng = random.Random(13)
    for i in range(3):
        proc = subprocess.Popen([*ORGKIT, "deposit", "--notes", str(notes), "--title", f"Finding {i}",
                                 "--body", FINDING], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.1, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert orgkit(notes, env, "deposits").returncode == 0
    deposit_invariants(notes)


def _multi_file_proposals(notes: Path, env: dict, llm_server) -> list[str]:
    """A deposit whose proposals change three files (the deposit, noweb.org, a new note)."""
    llm_server.reply({"proposals": [
        {"kind": "link", "dest": TANGLE, "description": "tangling", "chunks": [1]},
        {"kind": "append", "target": NOWEB, "text": "Prefer noweb over :var.", "chunks": [2]},
        {"kind": "new", "title": "Var is refused", "body": "Evaluating :var would run code.", "chunks": [1]},
    ]})
    # in this process: the deposit is the setup; the processes under test are the reviews killed after it
    done = cli_as_process(env | {"ORGKIT_LLM_ENDPOINT": llm_server.url}, "deposit", "--title", "Tangling and var",
                          "--body", FINDING, "--json", "--notes", str(notes))
    assert done.exit_code == 0, done.stderr
    return [r["id"] for r in rows(notes, "SELECT id FROM proposals WHERE status = 'pending' ORDER BY seq")]


@pytest.mark.parametrize("when, nth", [("before", 1), ("after", 1), ("after", 2), ("after", 3)])
def test_a_review_killed_mid_batch_is_finished_or_rolled_back(notes: Path, env: dict, llm_server,
                                                              when: str, nth: int) -> None:
    ids = _multi_file_proposals(notes, env, llm_server)
    before = {p: (notes / p).read_text() for p in ("noweb.org",)}
    code = crash(notes, env, "orgkit.memory.resolver", when, nth, "review", "accept", *ids)
    assert code == -signal.SIGKILL
    assert rows(notes, "SELECT state FROM batches") == [{"state": "applying"}]
    assert orgkit(notes, env, "review", "list").returncode == 0
    batch_invariants(notes)
    state = rows(notes, "SELECT state FROM batches")[0]["state"]
    assert state == "applied"  # no file was touched in between, so the batch is finished
    assert "Prefer noweb over :var." in (notes / "noweb.org").read_text() != before["noweb.org"]
    assert {r["status"] for r in rows(notes, "SELECT status FROM proposals")} == {"accepted"}


def test_a_batch_whose_file_changed_after_the_crash_is_rolled_back(notes: Path, env: dict, llm_server) -> None:
    ids = _multi_file_proposals(notes, env, llm_server)
    crash(notes, env, "orgkit.memory.resolver", "after", 1, "review", "accept", *ids)
    plan = rows(notes, "SELECT plan FROM batches")[0]["plan"]
    untouched = next(p["path"] for p in plan if (notes / p["path"]).exists()
                     and (notes / p["path"]).read_text() == p["before"] and p["before"] is not None)
    (notes / untouched).write_text((notes / untouched).read_text() + "\nedited by hand\n")
    assert orgkit(notes, env, "review", "list").returncode == 0
    assert rows(notes, "SELECT state FROM batches")[0]["state"] == "rolled-back"
    for p in plan:
        path = notes / p["path"]
        if p["path"] == untouched:
            assert path.read_text().endswith("edited by hand\n")
        else:
            assert (path.read_text() if path.exists() else None) == p["before"]
    assert {r["status"] for r in rows(notes, "SELECT status FROM proposals")} == {"pending"}


def test_reviews_killed_at_random_moments_never_leave_half_a_batch(notes: Path, env: dict, llm_server) -> None:
    rng = random.Random(7)
    for i in range(2):  # the exact points of a batch are tested above; these kills fall between them
        ids = _multi_file_proposals(notes, env, llm_server)
        proc = subprocess.Popen([*ORGKIT, "review", "accept", *ids, "--notes", str(notes)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert orgkit(notes, env, "review", "list").returncode == 0
        batch_invariants(notes)
        deposit_invariants(notes)

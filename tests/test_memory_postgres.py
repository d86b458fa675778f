"""The memory flow on PostgreSQL: processes with state and data dirs of their own over one database.

Two sides, A and B, share one notes directory and one database (as a team's
processes on two machines with one shared working copy would) but nothing
else: no SQLite file and no lock file they could meet in. What one side
deposits or decides, the other sees; decisions and deposits meet only in the
database's rows and advisory locks.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_notes import FINDING, NOWEB, TANGLE, make_notes, pg_rows
from test_memory_processes import CRASHER

ORGKIT = [str(Path(sys.executable).with_name("orgkit"))]


@dataclass
class Team:
    notes: Path
    url: str
    envs: dict[str, dict]

    def run(self, side: str, *args: str, extra: dict | None = None) -> subprocess.CompletedProcess:
        """`orgkit ARGS --notes NOTES` as a process of `side`."""
        return subprocess.run([*ORGKIT, *args, "--notes", str(self.notes)], env=self.envs[side] | (extra or {}),
                              capture_output=True, text=True, timeout=120)

    def start(self, side: str, *args: str) -> subprocess.Popen:
        return subprocess.Popen([*ORGKIT, *args, "--notes", str(self.notes)], env=self.envs[side],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def rows(self, sql: str, args: tuple = ()) -> list[dict]:
        return pg_rows(self.url, sql, args)


@pytest.fixture
def team(offline_env: dict, pg_url: str, tmp_path: Path) -> Team:
    """Side A is alice's, side B bob's (the login name is who acts)."""
    notes = make_notes(tmp_path / "notes")
    envs = {side: offline_env | {"ORGKIT_DATABASE_URL": pg_url, "LOGNAME": user, "USER": user,
                                 "ORGKIT_STATE_DIR": str(tmp_path / f"state-{side}"),
                                 "ORGKIT_DATA_DIR": str(tmp_path / f"data-{side}")}
            for side, user in (("A", "alice"), ("B", "bob"))}
    return Team(notes, pg_url, envs)


# Children forked from this process run the CLI with one side's environment: real processes that
# start in milliseconds (a new interpreter takes half a second), so sixteen concurrent depositors
# take a few seconds and a kill a tenth of one.

def _fork(env: dict, args: list[str], crash: tuple[str, int] | None = None) -> int:
    """A child running `orgkit ARGS` (killing itself with SIGKILL at `crash`: before or after the
    Nth file write of the resolver); returns its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        sys.stdout = sys.stderr = open(quiet, "w", closefd=False)
        os.environ.clear()
        os.environ.update(env)
        when, nth = crash or ("never", 0)
        sys.argv = ["-c", "orgkit.memory.resolver", when, str(nth), *args]
        exec(CRASHER, {"__name__": "__main__"})
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os._exit(code)


def _status(pid: int) -> int:
    """The child's exit code, or minus the signal that ended it."""
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _ids(team: Team, side: str) -> list[str]:
    listed = team.run(side, "review", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return [p["id"] for p in json.loads(listed.stdout)]


def test_deposited_through_one_process_accepted_through_another_recalled_with_provenance(team: Team) -> None:
    done = team.run("A", "deposit", "--title", "Tangling and var", "--body", FINDING, "--json")
    assert done.returncode == 0, done.stderr
    deposit = json.loads(done.stdout)
    ids = _ids(team, "B")
    assert len(ids) >= 2  # the note's admission and the librarian's link to the tangling note
    accepted = team.run("B", "review", "accept", *ids, "--json")
    assert accepted.returncode == 0, accepted.stderr
    recalled = team.run("A", "recall", "tangling var header arguments", "--json")
    assert recalled.returncode == 0, recalled.stderr
    hit = next(h for h in json.loads(recalled.stdout)["included"] if h["id"] == deposit["id"])
    provenance = hit["provenance"]
    assert (provenance["deposited_by"], provenance["approved_by"], provenance["review"]) == ("alice", "bob", "accepted")
    assert {c["approved_by"] for c in provenance["changes"]} == {"bob"}
    assert {(r["actor"], r["action"]) for r in team.rows("SELECT actor, action FROM audit")} >= {
        ("alice", "deposit"), ("bob", "accept"), ("alice", "recall")}
    # Nothing of the memory flow was kept beside either side's files.
    assert not [p for side in "AB" for p in Path(team.envs[side]["ORGKIT_DATA_DIR"]).glob("**/*")
                if p.name.startswith("memory") or p.suffix == ".lock"]
    doctor = team.run("B", "doctor", "--json")
    report = json.loads(doctor.stdout)
    assert report["facts"]["memory"] == {"deposits": 1, "pending": 0, "accepted": len(ids), "failed": 0,
                                          "refused": 0}
    assert not [f for f in report["findings"] if f["check"] == "memory"]


def test_sixteen_concurrent_depositors_over_two_sides_lose_nothing(team: Team) -> None:
    children = [_fork(team.envs["AB"[i % 2]], ["deposit", "--title", "Same title", "--body", f"finding number {i}",
                                              "--no-process", "--notes", str(team.notes)]) for i in range(16)]
    assert [_status(pid) for pid in children] == [0] * 16
    stored = team.rows("SELECT id, path, status, actor FROM deposits")
    assert len({r["path"] for r in stored}) == 16 and {r["status"] for r in stored} == {"pending"}
    assert sorted(r["actor"] for r in stored) == ["alice"] * 8 + ["bob"] * 8
    files = sorted((team.notes / "deposits").glob("*.org"))
    assert {f.relative_to(team.notes).as_posix() for f in files} == {r["path"] for r in stored}
    bodies = sorted(int(line.rsplit(" ", 1)[1]) for f in files for line in f.read_text().splitlines()
                    if line.startswith("finding number"))
    assert bodies == list(range(16))
    audited = team.rows("SELECT subject FROM audit WHERE action = 'deposit'")
    assert sorted(r["subject"] for r in audited) == sorted(r["id"] for r in stored)


def test_two_reviewers_deciding_one_proposal_at_once_one_wins(team: Team) -> None:
    done = team.run("A", "deposit", "--title", "Tangling", "--body", FINDING, "--json")
    assert done.returncode == 0, done.stderr
    ids = _ids(team, "A")
    racers = [team.start(side, "review", "accept", *ids) for side in "AB"]
    outs = [p.communicate(timeout=120) for p in racers]
    codes = sorted(p.returncode for p in racers)
    assert codes == [0, 1], outs
    error = next(err for p, (_, err) in zip(racers, outs) if p.returncode == 1)
    assert error.count("\n") == 1 and error.startswith("orgkit: error: proposal ") and "not pending" in error
    assert len(team.rows("SELECT id FROM batches")) == 1
    assert len(team.rows("SELECT seq FROM decisions")) == len(ids)


# --- SIGKILLs of the writer mid-batch ------------------------------------------------------------
# A side's `review accept` is killed at an exact point around a file write (the crash hook of
# test_memory_processes) or at a random moment; the other side's next command finds the batch
# applied whole or not at all, and undoes it for the next kill.

def _settled(team: Team, cli, batches_before: int) -> str | None:
    """After a kill: the other side's command finishes or rolls back the batch, which must then be
    whole (every file at its after text, every proposal accepted) or absent; returns the batch."""
    listed = cli("review", "list", "--notes", str(team.notes), env=team.envs["B"])
    assert listed.exit_code == 0, listed.stderr
    batches = team.rows("SELECT * FROM batches ORDER BY at, id")
    assert all(b["state"] in ("applied", "rolled-back") for b in batches)
    fresh = [b for b in batches if b["action"] == "accept" and not b["undone_by"]]
    assert len(batches) in (batches_before, batches_before + 1) and len(fresh) <= 1
    statuses = {r["status"] for r in team.rows("SELECT status FROM proposals")}
    if not fresh or fresh[0]["state"] == "rolled-back":
        assert statuses == {"pending"}
        return None
    for item in fresh[0]["plan"]:
        path = team.notes / item["path"]
        assert (path.read_text() if path.exists() else None) == item["after"], item["path"]
    assert statuses == {"accepted"}
    return fresh[0]["id"]


def test_writers_killed_mid_batch_never_leave_half_a_batch(team: Team, cli, llm_server) -> None:
    llm_server.reply({"proposals": [
        {"kind": "link", "dest": TANGLE, "description": "tangling", "chunks": [1]},
        {"kind": "append", "target": NOWEB, "text": "Prefer noweb over :var.", "chunks": [2]},
        {"kind": "new", "title": "Var is refused", "body": "Evaluating :var would run code.", "chunks": [1]},
    ]})
    env_a = team.envs["A"] | {"ORGKIT_LLM_ENDPOINT": llm_server.url}
    done = cli("deposit", "--title", "Tangling and var", "--body", FINDING, "--notes", str(team.notes), env=env_a)
    assert done.exit_code == 0, done.stderr
    ids = [r["id"] for r in team.rows("SELECT id FROM proposals ORDER BY seq")]
    originals = {rel: (team.notes / rel).read_text() for rel in ("noweb.org", "tangle.org")}
    rng = random.Random(22)
    span = 0.0  # how long an accept takes here, measured by the first, unkilled one
    kills = 0
    for crash in ["none", ("before", 1), ("after", 1), ("after", 3)] + [None] * 20:  # None: at a random moment
        batches = len(team.rows("SELECT id FROM batches"))
        started = time.monotonic()
        pid = _fork(team.envs["A"], ["review", "accept", *ids, "--notes", str(team.notes)],
                    crash if isinstance(crash, tuple) else None)
        if crash is None:
            time.sleep(rng.uniform(0.0, span * 0.6))
            os.kill(pid, signal.SIGKILL)
        code = _status(pid)
        took = time.monotonic() - started
        span = span or took
        if crash is None and code == 0:  # it finished before its kill: accepts are quicker now, aim earlier
            span = min(span, took)
        assert code == (0 if crash == "none" else -signal.SIGKILL) or crash is None
        kills += code == -signal.SIGKILL
        batch = _settled(team, cli, batches)
        if batch is not None:
            undone = cli("review", "undo", batch, "--notes", str(team.notes), env=team.envs["B"])
            assert undone.exit_code == 0, undone.stderr
        assert {rel: (team.notes / rel).read_text() for rel in originals} == originals
    # the exact points, and most random moments fall inside the accept (a loaded machine can make a
    # later accept quicker than the first, so a few random kills arrive after it has finished)
    assert kills >= 3 + 10


def test_the_librarian_finds_the_same_evidence_on_both_engines(pg_url: str, tmp_path: Path) -> None:
    """Evidence for a deposit over the bundled manual: the same notes, passages, scores and
    chunks from SQLite's FTS5 and from the terms table."""
    import shutil

    from conftest import REPO
    from orgkit.index import Index, refresh
    from orgkit.memory.evidence import gather
    from orgkit.memory.librarian import numbered_chunks

    notes = tmp_path / "notes"
    shutil.copytree(REPO / "notes", notes)
    chunks = numbered_chunks("orgkit tangle refuses header arguments such as :var, which need evaluation.\n\n"
                             "A deposit goes to the librarian, and review decides on its proposals.\n\n"
                             "Hybrid search fuses lexical BM25 ranking with dense vectors.")
    found = {}
    for engine, url in (("sqlite", None), ("postgres", pg_url)):
        index = Index.at(notes, tmp_path / f"state-{engine}", url)
        try:
            refresh(index)
            with index.snapshot() as conn:
                found[engine] = [(e.id, e.file, round(e.best, 9), e.chunks, round(e.overlap, 9),
                                  [(m.chunk, m.passage) for m in e.matches])
                                 for e in gather(conn, index.backend, chunks, {"a-deposit", "deposits/a.org"})]
        finally:
            index.close()
    assert len(found["sqlite"]) >= 5 and found["sqlite"] == found["postgres"]

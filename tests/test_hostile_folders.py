"""Fault injection: a received notes folder and a caller may be hostile; orgkit acts nowhere outside
the notes, says what it refused in one line, and keeps answering.

The folders are built from the principle, not from a list of known holes: a
symlink out of the notes at every level orgkit writes under (the state and data
dirs, their subfolders, each file it opens, lock files), a shipped memory
database whose rows hold IDs with separators, paths of instruction places and
values of every wrong type, a malformed extraction run, a full disk. After each
command the tree beside the notes (a victim folder every link points into) is
the same, byte for byte, and no command prints a traceback.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from test_received_folder import deposit_once, outside_state, received  # noqa: F401 - the fixture
from orgkit.redact import redact

VICTIM = "the user's own file\n"


def beside(base: Path) -> tuple[dict[str, str], list[str]]:
    """The files beside the notes by hash (`outside_state`) and every directory there."""
    dirs = sorted(p.relative_to(base).as_posix() for p in base.rglob("*")
                  if p.is_dir() and not p.is_symlink() and "notes" not in p.relative_to(base).parts)
    return outside_state(base), dirs


@pytest.fixture
def victim(received: Path) -> Path:  # noqa: F811 - the fixture imported above
    """A folder beside the notes that every hostile link points into, with a file in it."""
    folder = received.parent / "victim"
    folder.mkdir()
    (folder / "keep.txt").write_text(VICTIM)
    return folder


def one_line_or_ok(result) -> None:
    """Exit 0, or 1 with one error line on stderr (after any warnings or progress) naming the refusal:
    never a traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    if result.exit_code:
        *warnings, error = result.stderr.splitlines()
        assert result.exit_code == 1 and error.startswith("orgkit: error: "), result.stderr
        assert all(line.startswith("orgkit: ") and "error" not in line[:15] for line in warnings), result.stderr


# --- symlinks at every level ------------------------------------------------------------------

# (where the link is, relative to the notes; what it points to in the victim folder; the commands)
INDEX = [("index", "--no-embed"), ("index", "--rebuild", "--no-embed")]
MEMORY = [("deposit", "--title", "A finding", "--body", "Text.", "--no-process"), ("deposits",)]
EXTRACT = [("extract", "a.md", "--schema", "adr", "--plan")]
TOKENS = [("token", "add", "t", "--role", "reader"), ("token", "list")]
LINKS = [
    (".orgkit", "", INDEX),
    ("orgkit-data", "", MEMORY),
    (".orgkit/index.sqlite", "keep.txt", INDEX),
    (".orgkit/index.sqlite-wal", "wal", INDEX),
    (".orgkit/index.lock", "lock", INDEX),
    (".orgkit/.gitignore", "gitignore", INDEX),
    ("orgkit-data/memory.sqlite", "keep.txt", MEMORY),
    ("orgkit-data/memory.sqlite-journal", "journal", MEMORY),
    ("orgkit-data/locks", "", MEMORY),
    ("orgkit-data/memory.lock", "lock", MEMORY),
    ("deposits", "", MEMORY),
    ("orgkit-data/extract", "", EXTRACT),
    ("orgkit-data/extract/sources", "", EXTRACT),
    ("orgkit-data/tokens.json", "keep.txt", TOKENS),
]


@pytest.mark.parametrize("where, target, commands", LINKS, ids=[w for w, _, _ in LINKS])
def test_a_link_out_at_any_level_writes_and_deletes_nothing_outside(received: Path, victim: Path, cli,  # noqa: F811
                                                                    where: str, target: str, commands,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    (received / "a.md").write_text("# ADR\n\nWe will keep the cache in SQLite.\n")
    link = received / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim / target if target else victim)
    before = beside(received.parent)
    for args in commands:
        result = cli(*args)
        one_line_or_ok(result)
        assert beside(received.parent) == before, (where, args, result.stderr)


def test_a_dir_the_user_names_may_be_a_link(received: Path, victim: Path, cli, monkeypatch) -> None:  # noqa: F811
    """Trust comes from the user: the same link named by ORGKIT_STATE_DIR is used."""
    (received / ".orgkit").symlink_to(victim)
    refused = cli("index", "--no-embed")
    assert refused.exit_code == 1 and "leads outside the notes dir through a symlink" in refused.stderr
    assert refused.stderr.count("\n") == 1
    (received / "orgkit.toml").write_text('state_dir = ".orgkit"\ndata_dir = "elsewhere"\n')
    (received / "elsewhere").symlink_to(victim)
    before = beside(received.parent)
    for args in (("index", "--no-embed"), ("deposit", "--title", "T", "--body", "B", "--no-process")):
        one_line_or_ok(cli(*args))  # a notes folder's own file is no user's word
        assert beside(received.parent) == before
    monkeypatch.setenv("ORGKIT_STATE_DIR", str(received / ".orgkit"))
    assert cli("index", "--no-embed").exit_code == 0
    assert (victim / "index.sqlite").is_file()


def test_a_notes_dir_reached_through_a_link_is_the_notes(received: Path, cli, monkeypatch) -> None:  # noqa: F811
    alias = received.parent / "alias"
    alias.symlink_to(received)
    monkeypatch.setenv("ORGKIT_NOTES", str(alias))
    assert cli("index", "--no-embed").exit_code == 0
    deposit_once(cli)


# --- a shipped memory database -----------------------------------------------------------------

DEPOSIT_ROW = ("INSERT INTO deposits(id, path, title, lane, via, actor, created, sha, meta, status) "
               "VALUES (?,?,'t','agent','cli','mallory','2026-01-01T00:00:00Z',?,'{}',?)")
BATCH_ROW = ("INSERT INTO batches(id, action, state, actor, at, plan, proposals) "
             "VALUES (?,'accept','applying','mallory','2026-01-01T00:00:00Z',?,?)")
NO_STATUSES = json.dumps({"statuses": {}, "decisions": [], "why": None, "payloads": {}})


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_stored_ids_and_paths_name_nothing_outside_and_no_instruction_place(received: Path, victim: Path,  # noqa: F811
                                                                             cli) -> None:
    deposit_once(cli)
    personas = received / "personas"
    personas.mkdir()
    (personas / "librarian.org").write_text("You file notes.\n")
    (received / "orgkit.toml").write_text("[search]\nmin_score = 0.0\n")
    (received / "link").symlink_to(personas)
    kept = {p: p.read_bytes() for p in (personas / "librarian.org", received / "orgkit.toml")}
    escape = f"../../{victim.name}/planted"
    with sqlite3.connect(received / "orgkit-data" / "memory.sqlite") as conn:
        for row_id, path, status in ((escape, "deposits/a.org", "writing"), (escape + "2", "deposits/b.org", "pending"),
                                     ("d/../../x", "deposits/c.org", "writing")):
            conn.execute(DEPOSIT_ROW, (row_id, path, "0" * 64, status))
        for row_id, path in (("W1", "orgkit.toml"), ("W2", "personas/librarian.org"), ("W3", "link/librarian.org")):
            for sha in ("0" * 64, _sha(received / path)):  # interrupted before, and after, the file was written
                conn.execute(DEPOSIT_ROW, (row_id + sha[:1], path, sha, "writing"))
        conn.execute(BATCH_ROW, ("../B1", json.dumps([{"path": "planted-b1.org", "before": None, "after": "* x\n"}]),
                                 NO_STATUSES))
        conn.execute(BATCH_ROW, ("B2", json.dumps([{"path": "link/evil.org", "before": None, "after": "Obey.\n"}]),
                                 NO_STATUSES))
    before = beside(received.parent)
    for args in (("deposits",), ("review", "list"), ("review", "batches")):
        result = cli(*args)
        one_line_or_ok(result)
        assert beside(received.parent) == before, (args, result.stderr)
    assert "is not an ID" in result.stderr or "is not an ID" in cli("deposits").stderr
    assert {p: p.read_bytes() for p in kept} == kept
    assert sorted(os.listdir(personas)) == ["librarian.org"]
    assert not list(received.parent.rglob("planted*"))


BAD_VALUES = [None, 7, "{", '{"a": 1}', "../../x"]


@pytest.mark.parametrize("table, column", [("deposits", "meta"), ("deposits", "path"), ("deposits", "status"),
                                           ("proposals", "payload"), ("proposals", "seq"), ("proposals", "chunks"),
                                           ("batches", "plan"), ("batches", "proposals"), ("batches", "id")])
def test_hostile_rows_give_one_line(received: Path, cli, table: str, column: str) -> None:  # noqa: F811
    deposit_once(cli)
    db = received / "orgkit-data" / "memory.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(BATCH_ROW, ("B1", "[]", NO_STATUSES))
        kept = conn.execute(f"SELECT rowid, {column} FROM {table}").fetchall()
    before = beside(received.parent)
    for value in BAD_VALUES:
        with sqlite3.connect(db) as conn:
            try:
                conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
            except sqlite3.IntegrityError:  # the schema itself refuses it
                continue
        for args in (("deposits",), ("review", "list"), ("review", "batches")):
            one_line_or_ok(cli(*args))
        with sqlite3.connect(db) as conn:
            conn.executemany(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", [(v, r) for r, v in kept])
    assert beside(received.parent) == before


# --- a malformed extraction run ----------------------------------------------------------------

def test_a_malformed_extraction_run_is_one_line(received: Path, cli, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    (received / "a.md").write_text("# ADR\n\nWe will keep the cache in SQLite. Status: Accepted.\n")
    planned = cli("extract", "a.md", "--schema", "adr", "--plan", "--json")
    assert planned.exit_code == 0, planned.stderr
    run = json.loads(planned.stdout)["run"]
    folder = received / "orgkit-data" / "extract" / "runs" / run
    good = json.loads((folder / "run.json").read_text())
    hostile = [None, [], {"sources": "x"}, {**good, "schema": {}}, {**good, "sources": [{**good["sources"][0],
                                                                                         "sha256": None}]},
               {**good, "sources": [{**good["sources"][0], "supersedes": 7}]}]
    for record in hostile:
        (folder / "run.json").write_text(json.dumps(record))
        for args in (("extract", "--resume", run), ("audit", run)):
            result = cli(*args)
            assert result.exit_code == 1 and "malformed" in result.stderr, result.stderr
    (folder / "run.json").write_text(json.dumps(good))
    tasks = (folder / "tasks.json").read_text()
    (folder / "tasks.json").write_text(json.dumps({"run-note": None}))
    result = cli("extract", "--resume", run)
    assert result.exit_code == 1 and "tasks.json is malformed" in result.stderr
    (folder / "tasks.json").write_text(tasks)
    (received / "c.json").write_text(json.dumps({"run": run, "candidates": [
        {"source": "a.md", "dimension": "decision", "claim": "Keep SQLite.",
         "quote": "We will keep the cache in SQLite."}]}))
    assert cli("extract", "--commit", "c.json").exit_code == 0
    for claims in (7, {}, {"claims": "x"}, {"claims": [{}]}, {"claims": [{"claim_id": None, "dimension": []}]}):
        (folder / "claims-0.json").write_text(json.dumps(claims))
        for args in (("extract", "--resume", run), ("audit", run), ("audit", "--all")):
            result = cli(*args)
            one_line_or_ok(result)
            assert result.exit_code == 0 or "not as orgkit writes it" in result.stderr or "malformed" in result.stderr


# --- a full disk -------------------------------------------------------------------------------

def _file_size_limit(limit: int):
    """A child's file size limit: a write past it fails with EFBIG, as a full disk fails a write."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_is_one_line_and_nothing_half_written(received: Path, cli) -> None:  # noqa: F811
    deposit_once(cli)
    (received / "lit.org").write_text("#+begin_src python :tangle big.py\n" + "x = 1\n" * 20000 + "#+end_src\n")
    orgkit = [sys.executable, "-c", "from orgkit.cli import main; main()"]
    before = {p.relative_to(received).as_posix() for p in received.rglob("*") if "orgkit-data" not in p.parts}
    for args in (("deposit", "--title", "Big", "--body", "-", "--no-process"), ("tangle", "lit.org")):
        done = subprocess.run([*orgkit, *args], capture_output=True, text=True, cwd=received, timeout=60,
                              input="b" * 200_000, preexec_fn=_file_size_limit(100_000))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("orgkit: error: "), done.stderr
    after = {p.relative_to(received).as_posix() for p in received.rglob("*") if "orgkit-data" not in p.parts}
    assert not {p for p in after - before if not p.startswith(".orgkit")}  # no note, no target, no temporary
    listed = cli("deposits", "--json")
    assert listed.exit_code == 0 and [d["title"] for d in json.loads(listed.stdout)] == ["A finding"]


# --- what a remote caller sees ------------------------------------------------------------------

def test_libpq_secrets_in_every_form_are_masked() -> None:
    secret = "hunter2-Zq"
    forms = [f"host=h password='a b {secret}'", f'host=h password="a b {secret}"', f"password='x\\' {secret}'",
             f"postgresql://u:%27{secret}%20@h/d", f"postgres://:{secret}@[::1]:5/d", f"postgresql://u:{secret}@a,b/d",
             f"postgresql://h/d?sslpassword={secret}", f"postgresql://h/d?passfile=/p/{secret}",
             f"service={secret}", f"postgresql://h/d?password='{secret} x'", f"postgresql://u:a%40{secret}@h/d"]
    for text in forms:
        assert secret not in redact(text), text


@pytest.fixture
def server(received: Path, cli, tiny_model_dir):  # noqa: F811
    """The team server over the received folder, with strict limits, and an agent's and a reader's token."""
    from test_http import HttpServer
    from tiny_model import MODEL_NAME

    tokens = {role: json.loads(cli("token", "add", f"{role}-1", "--role", role, "--json").stdout)["token"]
              for role in ("reader", "agent")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")} | {
        "ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir), "ORGKIT_HTTP_DEPOSITS_PER_MINUTE": "6",
        "ORGKIT_HTTP_MAX_UNAUTHENTICATED": "4"}
    running = HttpServer(received, env)
    yield running, tokens
    running.close()


def test_the_server_refuses_floods_and_shows_no_server_path(received: Path, victim: Path, server) -> None:  # noqa: F811
    running, tokens = server
    before = beside(received.parent)
    # A token's deposits past its rate: 429 with Retry-After, nothing written.
    first = running.op("deposit", tokens["agent"], title="One", body="Text.", no_process=True)
    assert first.status_code == 200, first.text
    second = running.op("deposit", tokens["agent"], title="Two", body="Text.", no_process=True)
    assert second.status_code == 429 and int(second.headers["retry-after"]) >= 1, second.text
    assert not list((received / "deposits").glob("*two*"))
    # A connection flood with no token: the shed connection hears 503, the server answers a reader.
    flood = [socket.create_connection(("127.0.0.1", running.port)) for _ in range(8)]
    try:
        flood[0].settimeout(5)
        assert flood[0].recv(200).startswith(b"HTTP/1.1 503"), "the oldest connection was not answered"
        answered = running.op("nodes", tokens["reader"])
        assert answered.status_code == 200, answered.text
    finally:
        for sock in flood:
            sock.close()
    # An error a reader sees names paths inside the notes only.
    (received / "out.org").write_text(f"#+begin_src sh :tangle {victim}/x.sh\necho\n#+end_src\n")
    (received / "dir.org").write_text("#+begin_src sh :tangle sub/x.sh :mkdirp no\necho\n#+end_src\n")
    for name, params in (("read", {"ids": ["no-such-id"]}), ("tangle", {"files": ["out.org"]}),
                         ("tangle", {"files": ["dir.org"]}), ("scan", {"query": "x", "regex": True})):
        answer = running.op(name, tokens["reader"], **params)
        assert str(received) not in answer.text and str(received.parent) not in answer.text, answer.text
    assert beside(received.parent) == before
    assert httpx.get(f"{running.url}/ops", headers={"Authorization": f"Bearer {tokens['reader']}"},
                     timeout=10).status_code == 200

"""Databases the previous release made, migrated by `orgkit db migrate`, answer as before.

The previous release's tables are written here as it wrote them (one line a
table), not taken from orgkit's migrations: what they declare is a fixed past.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
import pytest

from memory_notes import make_notes

# memory.sqlite as the previous release made it: `CREATE ... IF NOT EXISTS`, no version recorded.
OLD_MEMORY = """
CREATE TABLE IF NOT EXISTS deposits (id TEXT PRIMARY KEY, path TEXT NOT NULL, title TEXT NOT NULL, lane TEXT NOT NULL, via TEXT NOT NULL, actor TEXT NOT NULL, created TEXT NOT NULL, sha TEXT NOT NULL, meta TEXT NOT NULL DEFAULT '{}', supersedes TEXT, superseded_by TEXT, status TEXT NOT NULL, error TEXT, model TEXT, processed_at TEXT);
CREATE TABLE IF NOT EXISTS proposals (id TEXT PRIMARY KEY, deposit TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, target TEXT, payload TEXT NOT NULL, chunks TEXT NOT NULL, evidence TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, model TEXT NOT NULL, created TEXT NOT NULL, batch TEXT, decided_by TEXT, decided_at TEXT);
CREATE INDEX IF NOT EXISTS proposals_deposit ON proposals(deposit); CREATE INDEX IF NOT EXISTS proposals_status ON proposals(status);
CREATE TABLE IF NOT EXISTS batches (id TEXT PRIMARY KEY, action TEXT NOT NULL, state TEXT NOT NULL, actor TEXT NOT NULL, at TEXT NOT NULL, plan TEXT NOT NULL, proposals TEXT NOT NULL, undoes TEXT, undone_by TEXT);
CREATE TABLE IF NOT EXISTS decisions (seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, proposal TEXT NOT NULL, deposit TEXT NOT NULL, batch TEXT, kind TEXT NOT NULL, before TEXT, after TEXT, why TEXT);
CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, subject TEXT, detail TEXT NOT NULL DEFAULT '{}');
CREATE INDEX IF NOT EXISTS audit_subject ON audit(subject);
CREATE TABLE IF NOT EXISTS watermarks (subject TEXT PRIMARY KEY, sha TEXT NOT NULL, model TEXT NOT NULL, at TEXT NOT NULL);
"""  # noqa: E501 - one line a table
# The PostgreSQL index as the previous release's hand-written migrations 1 to 3 left it (its
# migration 4, the nodes' `seen` and `kind`, is left for `db migrate` to apply).
OLD_PG_INDEX = """
CREATE EXTENSION IF NOT EXISTS vector; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, hash TEXT NOT NULL, title TEXT NOT NULL);
CREATE TABLE outlines (rowid BIGINT PRIMARY KEY, file TEXT NOT NULL, parent BIGINT, title TEXT NOT NULL, label TEXT); CREATE INDEX outlines_file ON outlines (file);
CREATE TABLE nodes (rowid BIGINT PRIMARY KEY, id TEXT NOT NULL, file TEXT NOT NULL, level INTEGER NOT NULL, pos BIGINT NOT NULL, line BIGINT NOT NULL, end_line BIGINT NOT NULL, title TEXT NOT NULL, todo TEXT, priority TEXT, outline BIGINT, tags TEXT NOT NULL, refs TEXT NOT NULL, properties TEXT NOT NULL); CREATE INDEX nodes_id ON nodes (id); CREATE INDEX nodes_file ON nodes (file);
CREATE TABLE aliases (node BIGINT NOT NULL, alias TEXT NOT NULL, rowid BIGSERIAL PRIMARY KEY); CREATE INDEX aliases_node ON aliases (node); CREATE INDEX aliases_alias ON aliases (alias);
CREATE TABLE links (file TEXT NOT NULL, source TEXT NOT NULL, dest TEXT NOT NULL, type TEXT NOT NULL, pos BIGINT NOT NULL, line BIGINT NOT NULL); CREATE INDEX links_file ON links (file); CREATE INDEX links_source ON links (source); CREATE INDEX links_dest ON links (dest);
CREATE TABLE chunks (rowid BIGINT PRIMARY KEY, node BIGINT NOT NULL, file TEXT NOT NULL, line BIGINT NOT NULL, outline BIGINT, body TEXT NOT NULL, hash TEXT NOT NULL, tokens INTEGER NOT NULL DEFAULT 0); CREATE INDEX chunks_file ON chunks (file); CREATE INDEX chunks_hash ON chunks (hash);
CREATE VIEW chunk_text AS SELECT c.rowid AS rowid, c.file AS file, rtrim(f.title || ' ' || coalesce(o.title, '') || ' ' || coalesce((SELECT string_agg(a.alias, ' ' ORDER BY a.rowid) FROM aliases a WHERE a.node = c.node), '')) AS heading, c.body AS body FROM chunks c JOIN files f ON f.path = c.file LEFT JOIN outlines o ON o.rowid = c.outline;
CREATE TABLE chunk_terms (chunk BIGINT NOT NULL, term TEXT NOT NULL, heading INTEGER[] NOT NULL, body INTEGER[] NOT NULL, PRIMARY KEY (term, chunk)); CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk);
CREATE TABLE vectors (model TEXT NOT NULL, hash TEXT NOT NULL, vector vector NOT NULL, PRIMARY KEY (model, hash));
CREATE TABLE embed_queue (model TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (model, hash));
CREATE TABLE file_texts (path TEXT PRIMARY KEY, content TEXT NOT NULL);
"""  # noqa: E501 - one line a table
OLD_PG_TOKENS = ("CREATE TABLE tokens (name TEXT NOT NULL, role TEXT NOT NULL, sha256 TEXT PRIMARY KEY, created TEXT NOT NULL, "
                 "revoked TEXT); CREATE UNIQUE INDEX tokens_live_name ON tokens (name) WHERE revoked IS NULL")
DEPOSIT = ("d-old", "deposits/old.org", "An old finding", "agent", "cli", "ada", "2026-01-02T03:04:05Z", "0" * 64, "{}",
           None, None, "failed", "no model then", None, None)


def run_json(cli, *args: str, env: dict | None = None):
    result = cli(*args, "--json", env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def old_memory_rows(execute) -> None:
    """The previous release's rows: a deposit and its audit line."""
    execute("INSERT INTO deposits VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", DEPOSIT)
    execute("INSERT INTO audit (at, actor, action, subject, detail) VALUES (?, ?, ?, ?, ?)",
            (DEPOSIT[6], "ada", "deposit", "d-old", "{}"))


def answers(cli, notes: Path, env: dict | None = None) -> None:
    """The stores answer as before: the old deposit is listed, a search finds its note."""
    listed = run_json(cli, "deposits", "--notes", str(notes), env=env)
    assert [(d["id"], d["title"], d["status"]) for d in listed] == [("d-old", "An old finding", "failed")]
    found = run_json(cli, "search", "tomatoes sun", "--notes", str(notes), env=env)
    assert "Growing tomatoes" in json.dumps(found[:3])


@pytest.fixture
def notes(tmp_path: Path, tiny_model) -> Path:
    return make_notes(tmp_path / "notes")


def test_a_memory_store_without_a_version_is_stamped_and_keeps_its_rows(cli, notes: Path) -> None:
    assert cli("index", "--notes", str(notes), "--no-embed").exit_code == 0  # the index at the latest version
    db = notes / "orgkit-data" / "memory.sqlite"
    db.parent.mkdir(exist_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript(OLD_MEMORY)
        old_memory_rows(conn.execute)
    conn.close()
    status = cli("db", "status", "--notes", str(notes), "--json")
    assert json.loads(status.stdout)["schemas"]["memory"] == {"version": 0, "latest": 1}
    assert "schema behind: memory" in status.stderr
    # The file holds the first release's tables: its first step is taken as run, none is shown to run.
    assert run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes))["would_run"]["memory"] == []
    migrated = run_json(cli, "db", "migrate", "--notes", str(notes))
    assert migrated["migrated"] == {"index": [7, 7], "memory": [0, 1]}
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM audit WHERE subject = 'd-old'").fetchone()[0] == 1
    conn.close()
    answers(cli, notes)
    again = run_json(cli, "db", "migrate", "--notes", str(notes))
    assert again["migrated"] == {"index": [7, 7], "memory": [1, 1]}


def test_postgres_stores_at_their_recorded_versions_are_migrated(cli, notes: Path, pg_url: str) -> None:
    old_memory = OLD_MEMORY.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql in (OLD_PG_INDEX, old_memory, OLD_PG_TOKENS,
                    "CREATE TABLE orgkit_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)",
                    "INSERT INTO orgkit_schema VALUES ('index', 3), ('memory', 1), ('tokens', 1)"):
            conn.execute(sql)
        old_memory_rows(lambda sql, params: conn.execute(sql.replace("?", "%s"), params))
    env = {"ORGKIT_DATABASE_URL": pg_url}
    status = run_json(cli, "db", "status", "--notes", str(notes), env=env)
    assert {name: s["version"] for name, s in status["schemas"].items()} == {"index": 3, "memory": 1, "tokens": 1}
    shown = run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes), env=env)["would_run"]
    assert (shown["memory"], shown["tokens"]) == ([], [])  # counted as had: nothing to run for them
    migrated = run_json(cli, "db", "migrate", "--notes", str(notes), env=env)
    assert migrated["migrated"] == {"index": [3, 7], "memory": [1, 1], "tokens": [1, 1]}
    assert cli("index", "--notes", str(notes), "--no-embed", env=env).exit_code == 0
    answers(cli, notes, env)


NEW_STEPS = ["terms covered by their key", "searchable units", "leaf headings as passages"]
OLD_SQLITE_TABLES = ("meta", "files", "outlines", "nodes", "aliases", "links", "chunks", "vectors")


def _old_sqlite_index(fresh: Path, old: Path) -> None:
    """An index as the numbered scheme left it: the current code's first four steps (the numbered
    scripts) run by hand, counted in `user_version`, and the rows of a fresh index copied in."""
    from orgkit.storage.migrations import statements
    from orgkit.storage.schema import MIGRATIONS

    conn = sqlite3.connect(old, isolation_level=None)
    for each in MIGRATIONS[:4]:
        for statement in statements(each.sqlite or ""):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 4")
    conn.execute("ATTACH ? AS fresh", (str(fresh),))
    for table in OLD_SQLITE_TABLES:  # the columns the numbered scheme had, from a fresh index's rows
        columns = ", ".join(row[1] for row in conn.execute(f"PRAGMA main.table_info({table})"))
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM fresh.{table}")
    conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')")
    conn.execute("DETACH fresh")
    conn.close()


def test_an_index_of_the_numbered_scheme_is_upgraded_in_place_and_keeps_its_rows(cli, notes: Path,
                                                                                  tmp_path: Path) -> None:
    fresh_state, old_state = tmp_path / "fresh", tmp_path / "old"
    assert cli("index", "--notes", str(notes), "--no-embed", env={"ORGKIT_STATE_DIR": str(fresh_state)}).exit_code == 0
    old_state.mkdir()
    _old_sqlite_index(fresh_state / "index.sqlite", old_state / "index.sqlite")
    env = {"ORGKIT_STATE_DIR": str(old_state)}
    dry = cli("db", "migrate", "--dry-run", "--notes", str(notes), env=env)
    assert dry.exit_code == 0 and f"index: would run {', '.join(map(repr, NEW_STEPS))}" in dry.stdout
    shown = run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes), env=env)
    assert [s["name"] for s in shown["would_run"]["index"]] == NEW_STEPS
    assert shown["would_run"]["index"][0]["sql"] is None  # nothing to do on SQLite: recorded
    with sqlite3.connect(old_state / "index.sqlite") as conn:  # the dry run changed nothing
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'orgkit_migrations'").fetchone()
    conn.close()
    assert run_json(cli, "db", "migrate", "--notes", str(notes), env=env)["migrated"]["index"] == [4, 7]
    with sqlite3.connect(old_state / "index.sqlite") as conn:
        assert [n for (n,) in conn.execute("SELECT name FROM orgkit_migrations WHERE store = 'index' ORDER BY rowid")] \
            == ["index 1", "index 2", "index 3", "index 4", *NEW_STEPS]
    conn.close()
    search = ("search", "tomatoes sun", "--mode", "lexical", "--no-update", "--notes", str(notes))
    assert run_json(cli, *search, env=env) == run_json(cli, *search, env={"ORGKIT_STATE_DIR": str(fresh_state)})
    assert run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes), env=env)["would_run"]["index"] == []


def test_a_postgres_index_of_the_numbered_scheme_is_upgraded_in_place_and_keeps_its_rows(
        cli, notes: Path, pg_url: str, postgres_server) -> None:
    from conftest import new_database
    from orgkit.storage.schema import MIGRATIONS

    fresh_url = new_database(postgres_server)
    assert cli("index", "--notes", str(notes), "--no-embed", env={"ORGKIT_DATABASE_URL": fresh_url}).exit_code == 0
    with psycopg.connect(pg_url, autocommit=True) as old, psycopg.connect(fresh_url) as fresh:
        for each in MIGRATIONS[:4]:  # the numbered scripts, as the current code holds them
            old.execute(each.postgres)
        old.execute("CREATE TABLE orgkit_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        old.execute("INSERT INTO orgkit_schema VALUES ('index', 4)")
        for table in ("meta", "files", "outlines", "nodes", "aliases", "links", "chunks", "file_texts", "chunk_terms"):
            names = [name for (name,) in old.execute(  # the columns the numbered scheme had
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                (table,))]
            rows = fresh.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall()
            if rows:
                with old.cursor() as cur:
                    cur.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})",
                                    rows)
    env = {"ORGKIT_DATABASE_URL": pg_url}
    shown = run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes), env=env)
    assert [s["name"] for s in shown["would_run"]["index"]] == NEW_STEPS
    assert "term_passages" in shown["would_run"]["index"][0]["sql"]
    with psycopg.connect(pg_url) as conn:  # the dry run changed nothing
        assert conn.execute("SELECT to_regclass('term_passages')").fetchone()[0] is None
    assert run_json(cli, "db", "migrate", "--notes", str(notes), env=env)["migrated"]["index"] == [4, 7]
    with psycopg.connect(pg_url) as conn, psycopg.connect(fresh_url) as fresh:
        assert conn.execute("SELECT count(*) FROM chunk_terms").fetchone() \
            == fresh.execute("SELECT count(*) FROM chunk_terms").fetchone()
        assert conn.execute("SELECT term, passages FROM term_passages ORDER BY term").fetchall() \
            == fresh.execute("SELECT term, passages FROM term_passages ORDER BY term").fetchall()
    search = ("search", "tomatoes sun", "--mode", "lexical", "--no-update", "--notes", str(notes))
    assert run_json(cli, *search, env=env) == run_json(cli, *search, env={"ORGKIT_DATABASE_URL": fresh_url})


def test_a_dry_run_shows_the_memory_stores_steps_on_each_engine_and_runs_none(cli, notes: Path, pg_url: str) -> None:
    """`db migrate --dry-run` names the memory store's steps still to run, with the SQL of the engine
    they would run on, and makes nothing; once migrated, nothing is left to show."""
    shown = run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes))["would_run"]
    assert [s["name"] for s in shown["memory"]] == ["memory 1"] and "tokens" not in shown  # tokens: a file
    assert "seq INTEGER PRIMARY KEY AUTOINCREMENT" in shown["memory"][0]["sql"]
    assert not (notes / "orgkit-data" / "memory.sqlite").exists()

    env = {"ORGKIT_DATABASE_URL": pg_url}
    dry = cli("db", "migrate", "--dry-run", "--notes", str(notes), env=env)
    assert dry.exit_code == 0 and "memory: would run 'memory 1'" in dry.stdout
    shown = run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes), env=env)["would_run"]
    assert [s["name"] for s in shown["memory"]] == ["memory 1"] and [s["name"] for s in shown["tokens"]] == ["tokens 1"]
    assert "seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" in shown["memory"][0]["sql"]
    with psycopg.connect(pg_url) as conn:  # the dry run made nothing
        assert conn.execute("SELECT to_regclass('deposits'), to_regclass('orgkit_migrations')").fetchone() \
            == (None, None)
    assert run_json(cli, "db", "migrate", "--notes", str(notes), env=env)["migrated"]["memory"] == [0, 1]
    shown = run_json(cli, "db", "migrate", "--dry-run", "--notes", str(notes), env=env)["would_run"]
    assert shown == {"index": [], "memory": [], "tokens": []}

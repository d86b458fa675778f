"""The PostgreSQL backend gives the same answers as SQLite, on a real server.

One PostgreSQL (pgserver: PostgreSQL 16 with pgvector) serves the session;
each corpus is indexed once per backend, and every read operation is asked
the same questions through the CLI on both: the bundled manual embedded with
a tiny model (every search mode), braindump by words (lexical ranking over
3,000 passages). Scores may differ in the last
bits (FTS5 and SQL sum BM25 in different orders; float32 dot products
against pgvector's cosine), so they are compared within 1e-4, and hits whose
scores tie may come in either order.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO, new_database, shared_path

QUERIES = {
    "manual": ["search ranking", "tangle a file", "org-roam links", "deposit review recall", "embedding model offline",
               "search.inline_embed_limit", "teamserver tokens", "recieve deposits", "search matcha",
               "noeds", "toml dirs"],
    "braindump": ["emacs configuration", "spaced repetition", "functional programming"],
}
MODES = {"manual": ("lexical", "dense", "hybrid"), "braindump": ("lexical",)}


def _corpus(name: str, tmp: Path) -> Path:
    source = REPO / "notes" if name == "manual" else shared_path("corpora", "braindump")
    dest = tmp / name
    shutil.copytree(source, dest)
    return dest


@pytest.fixture(scope="module", params=["manual", "braindump"])
def both(request, postgres_server, tmp_path_factory):
    """(run, corpus name, notes dir): `run(backend, *args)` is `orgkit ARGS --json` on that backend."""
    from click.testing import CliRunner

    from orgkit.cli import main
    from tiny_model import MODEL_NAME, build_tiny_model

    corpus = request.param
    tmp = tmp_path_factory.mktemp(corpus)
    notes = _corpus(corpus, tmp)
    embed = len(MODES[corpus]) > 1
    base = {"ORGKIT_NOTES": str(notes), "ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tmp / "no-model")}
    if embed:  # a vocabulary of the corpus's own words, so passages get vectors of their own
        words = Counter(w.lower() for path in notes.rglob("*.org")
                        for w in re.findall(r"[A-Za-z]{3,}", path.read_text(encoding="utf-8")))
        base["ORGKIT_MODEL_PATH"] = str(build_tiny_model(tmp / "model", [w for w, _ in words.most_common(1500)]))
    envs = {"sqlite": {**base, "ORGKIT_STATE_DIR": str(tmp / "state-sqlite"), "ORGKIT_DATABASE_URL": ""},
            "postgres": {**base, "ORGKIT_STATE_DIR": str(tmp / "state-pg"),
                         "ORGKIT_DATABASE_URL": new_database(postgres_server)}}
    runner = CliRunner()

    def run(backend: str, *args: str):
        result = runner.invoke(main, [*args, "--json"], env=envs[backend], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    for backend in envs:
        built = run(backend, "index", *(() if embed else ("--no-embed",)))
        assert built["chunks"] > 100 and (built["pending"] == 0 if embed else built["embedded"] == 0)
    return run, corpus, notes


def _same_hits(sqlite: list[dict], postgres: list[dict]) -> None:
    """The same hits with the same fields; scores within 1e-4, tied hits in any order."""
    assert len(sqlite) == len(postgres)
    for a, b in zip(sqlite, postgres):
        assert a["score"] == pytest.approx(b["score"], abs=1e-4)
    by_id = {hit["id"]: hit for hit in postgres}
    cutoff = sqlite[-1]["score"] if sqlite else 0
    for hit in sqlite:
        if abs(hit["score"] - cutoff) < 1e-4:
            continue  # a tie at the end of the list may keep either node
        other = by_id[hit["id"]]
        assert {**hit, "score": 0} == {**other, "score": 0}
        assert hit["score"] == pytest.approx(other["score"], abs=1e-4)


def test_every_read_operation_answers_alike(both) -> None:
    run, corpus, _ = both
    for op in (("nodes",), ("links",)):
        assert run("sqlite", *op) == run("postgres", *op)
    for query in QUERIES[corpus]:
        for mode in MODES[corpus]:
            a = run("sqlite", "search", query, "--mode", mode, "--limit", "10")
            b = run("postgres", "search", query, "--mode", mode, "--limit", "10")
            assert a and all(hit["mode"] == mode for hit in a), (query, mode)
            _same_hits(a, b)
        assert run("sqlite", "scan", query) == run("postgres", "scan", query)
        context_a = run("sqlite", "context", query, "--budget", "600")
        context_b = run("postgres", "context", query, "--budget", "600")
        assert context_a["included"] and context_a["included"] == context_b["included"], (query, context_a)
        assert context_a["mode"] == context_b["mode"] == ("hybrid" if len(MODES[corpus]) > 1 else "lexical")
    nodes = run("sqlite", "nodes")
    linked = Counter(link["dest"] for link in run("sqlite", "links") if link["type"] == "id")
    for node_id, _ in linked.most_common(3):
        assert run("sqlite", "backlinks", node_id) == run("postgres", "backlinks", node_id)
    ids = [n["id"] for n in nodes[:5]]
    assert run("sqlite", "read", *ids, "--depth", "1") == run("postgres", "read", *ids, "--depth", "1")


def test_an_edit_reaches_both_backends_alike(both) -> None:
    run, corpus, notes = both
    if corpus != "manual":
        pytest.skip("one corpus is enough for the incremental path")
    (notes / "zebra.org").write_text(":PROPERTIES:\n:ID: zebra-note\n:END:\n#+title: Zebra stripes\n\n"
                                     "Zebra stripes confuse flies. See [[id:zebra-note][itself]].\n",
                                     encoding="utf-8")
    for backend in ("sqlite", "postgres"):
        updated = run(backend, "index")
        assert updated["parsed"] == 1 and updated["embedded"] == 1
    a = run("sqlite", "search", "zebra stripes", "--mode", "lexical")
    assert a[0]["id"] == "zebra-note"
    _same_hits(a, run("postgres", "search", "zebra stripes", "--mode", "lexical"))
    assert run("sqlite", "backlinks", "zebra-note") == run("postgres", "backlinks", "zebra-note")
    (notes / "zebra.org").unlink()
    for backend in ("sqlite", "postgres"):
        assert run(backend, "index")["removed"] == 1
    assert run("sqlite", "search", "zebra stripes", "--mode", "lexical") == \
        run("postgres", "search", "zebra stripes", "--mode", "lexical")


def test_the_kept_passage_totals_follow_every_change(pg_url: str, tmp_path: Path) -> None:
    """BM25's passage count and token total are kept beside the index, not counted per query: after
    a first index, an edit, a removal and a rebuild they are what counting the passages gives."""
    import psycopg

    from orgkit.index import Index, update

    notes = _corpus("manual", tmp_path)
    index = Index.at(notes, tmp_path / "state", pg_url)

    def kept_and_counted() -> tuple[dict, dict]:
        with psycopg.connect(pg_url) as conn:
            kept = dict(conn.execute("SELECT key, value::bigint FROM meta WHERE key IN ('passages', 'passage_tokens')"))
            n, t = conn.execute("SELECT count(*), sum(tokens) FROM chunks").fetchone()
        return kept, {"passages": n, "passage_tokens": t}

    update(index)
    kept, counted = kept_and_counted()
    assert kept == counted and counted["passages"] > 100
    first = sorted(notes.rglob("*.org"))[0]
    first.write_text(first.read_text(encoding="utf-8") + "\n* Zebra stripes\nZebra stripes confuse flies.\n",
                     encoding="utf-8")
    sorted(notes.rglob("*.org"))[1].unlink()
    assert update(index).removed == 1
    kept, counted = kept_and_counted()
    assert kept == counted
    assert index.passage_bm25(["zebra"], 1.0, list(range(1, counted["passages"] * 10)))
    update(index, rebuild=True)
    assert kept_and_counted() == (counted, counted)


def test_a_list_of_any_length_is_one_array_on_postgres(pg_url: str) -> None:
    """The backends' `among` find the same rows on both engines, past a slice too, whatever a text
    holds; on PostgreSQL the list is one array, so every length sends one statement text (prepared
    once, not parsed per length)."""
    import sqlite3

    from orgkit.storage.backend import PostgresBackend, SqliteBackend
    from orgkit.storage.db import IN_SLICE
    from orgkit.storage.postgres import connect

    rows = [(n, f"id-{n}") for n in range(1, 2 * IN_SLICE + 50)]
    rows += [(n, text) for n, text in enumerate(['a "quoted" id', "back\\slash", "comma, and {braces}", "NULL", "",
                                                 "é ü"], start=len(rows) + 1)]
    lite = sqlite3.connect(":memory:")
    pg = connect(pg_url)
    sent: list[str] = []
    run = pg.run
    pg.run = lambda sql, params=(): (sent.append(sql), run(sql, params))[1]  # type: ignore[method-assign]
    try:
        lite.execute("CREATE TEMP TABLE t (n bigint, id text)")
        lite.executemany("INSERT INTO t (n, id) VALUES (?, ?)", rows)
        pg.execute("CREATE TEMP TABLE t (n bigint, id text)")
        pg.run_many("INSERT INTO t (n, id) VALUES (%s, %s)", rows)
        on_pg, on_lite = PostgresBackend(pg_url), SqliteBackend()
        for wanted in ([3], [5, 1, 9], list(range(2, 2 * IN_SLICE, 2)), list(range(2 * IN_SLICE - 10, len(rows) + 1))):
            ids = [rows[n - 1][1] for n in wanted]
            expected = sorted(rows[n - 1] for n in wanted)
            for sql, values, before in (("SELECT n, id FROM t WHERE n {{}}", wanted, ()),
                                        ("SELECT n, id FROM t WHERE n > {p} AND id {{}}", ids, (0,))):
                assert sorted(on_pg.among(pg, sql.format(p=on_pg.P), values, before)) \
                    == sorted(on_lite.among(lite, sql.format(p=on_lite.P), values, before)) == expected
        assert set(sent) >= {"SELECT n, id FROM t WHERE n = ANY(%s)",
                             "SELECT n, id FROM t WHERE n > %s AND id = ANY(%s)"}
        assert not [sql for sql in sent if "IN (" in sql]
    finally:
        lite.close()
        pg.close()


def test_an_update_that_changes_many_files_leaves_the_planner_statistics(pg_url: str, tmp_path: Path) -> None:
    """A first index is analysed at once (a database copied from it before autovacuum's round would
    plan every query blind); an update of one file among many leaves that to autovacuum."""
    import psycopg

    from orgkit.index import Index, update

    notes = _corpus("manual", tmp_path)
    index = Index.at(notes, tmp_path / "state", pg_url)

    def analysed() -> dict:
        with psycopg.connect(pg_url) as conn:
            return dict(conn.execute("SELECT relname, last_analyze FROM pg_stat_user_tables "
                                     "WHERE relname IN ('chunks', 'chunk_terms')"))

    update(index, rebuild=True)
    first = analysed()
    assert set(first) == {"chunks", "chunk_terms"} and all(first.values())
    with psycopg.connect(pg_url) as conn:  # the statistics themselves, committed, for another session's planner
        assert conn.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'chunk_terms'").fetchone()[0] > 0
    edited = sorted(notes.rglob("*.org"))[0]
    edited.write_text(edited.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert update(index).parsed == 1
    assert analysed() == first
    index.close()


def test_the_database_url_is_trusted_configuration(cli, tmp_path: Path) -> None:
    """Never from a notes folder's own file; its password never printed."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "orgkit.toml").write_text('[database]\nurl = "postgresql://team@db.example/notes"\n')
    refused = cli("config", "--notes", str(notes), "--json", env={"ORGKIT_DATABASE_URL": ""})
    assert refused.exit_code == 0 and json.loads(refused.stdout)["database.url"]["value"] is None
    assert "database.url" in refused.stderr and "ORGKIT_DATABASE_URL" in refused.stderr
    (notes / "orgkit.toml").unlink()
    shown = cli("config", "--notes", str(notes), "--json",
                env={"ORGKIT_DATABASE_URL": "postgresql://team:s3cret@db.example:5432/notes"})
    assert shown.exit_code == 0 and "s3cret" not in shown.stdout
    assert json.loads(shown.stdout)["database.url"] == {
        "value": "postgresql://team:***@db.example:5432/notes", "origin": "env ORGKIT_DATABASE_URL", "kind": "trust"}
    wrong = cli("search", "x", "--notes", str(notes), env={"ORGKIT_DATABASE_URL": "mysql://db/notes"})
    assert wrong.exit_code == 1 and "database.url must start with postgresql://" in wrong.stderr


def test_a_killed_writer_releases_the_index_lock(pg_url: str, tmp_path: Path) -> None:
    """The writer lock is PostgreSQL's advisory lock: held across machines, freed when its holder dies."""
    import os
    import subprocess
    import sys

    from orgkit.index import Index, IndexBusy, update

    notes = _corpus("manual", tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom pathlib import Path\nfrom orgkit.index import Index\n"
         f"index = Index.at(Path({str(notes)!r}), Path({str(tmp_path / 'other')!r}), {pg_url!r})\n"
         "with index.backend.writer_lock(index, wait=False):\n"
         "    print('held', flush=True)\n    sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ})
    try:
        assert holder.stdout.readline() == "held\n"
        index = Index.at(notes, tmp_path / "state", pg_url)
        with pytest.raises(IndexBusy):
            update(index, wait=False)
        holder.kill()
        holder.wait()
        stats = update(index, wait=True)
        assert stats.parsed == stats.files > 10
    finally:
        holder.kill()
        holder.wait()


def test_db_status_migrate_and_doctor(cli, pg_url: str, tmp_path: Path) -> None:
    notes = _corpus("manual", tmp_path)
    env = {"ORGKIT_DATABASE_URL": pg_url, "ORGKIT_STATE_DIR": str(tmp_path / "state")}
    fresh = json.loads(cli("db", "status", "--notes", str(notes), "--json", env=env).stdout)
    assert fresh["backend"] == "postgres" and fresh["server"].startswith("16")
    assert fresh["vector"].startswith("available")
    assert fresh["schemas"] == {"index": {"version": 0, "latest": 7}, "memory": {"version": 0, "latest": 1},
                                "tokens": {"version": 0, "latest": 1}}
    doctor = json.loads(cli("doctor", "--notes", str(notes), "--json", env=env).stdout)
    assert any("pgvector is available but not installed" in p["message"] for p in doctor["findings"])
    migrated = cli("db", "migrate", "--notes", str(notes), "--json", env=env)
    assert json.loads(migrated.stdout)["migrated"] == {"index": [0, 7], "memory": [0, 1], "tokens": [0, 1]}
    status = cli("db", "status", "--notes", str(notes), env=env)
    assert "pgvector 0.6" in status.stdout and "index schema 7 (up to date)" in status.stdout
    assert "memory schema 1 (up to date)" in status.stdout
    again = json.loads(cli("db", "migrate", "--notes", str(notes), "--json", env=env).stdout)
    assert again["migrated"] == {"index": [7, 7], "memory": [1, 1], "tokens": [1, 1]}
    unreachable = {**env, "ORGKIT_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    down = cli("db", "status", "--notes", str(notes), env=unreachable)
    assert down.exit_code == 1 and down.stderr.count("\n") == 1
    assert down.stderr.startswith("orgkit: error: cannot connect to postgresql://nobody@127.0.0.1:1/none: ")


def test_embedding_is_a_work_queue_a_killed_worker_leaves_nothing_claimed(cli, pg_url: str, tmp_path: Path,
                                                                          tiny_model_dir: Path) -> None:
    """Workers skip the texts another holds; a killed worker's batch goes back to the queue whole."""
    import os
    import subprocess
    import sys

    from tiny_model import MODEL_NAME

    notes = _corpus("manual", tmp_path)
    env = {"ORGKIT_NOTES": str(notes), "ORGKIT_STATE_DIR": str(tmp_path / "state"), "ORGKIT_MODEL": MODEL_NAME,
           "ORGKIT_MODEL_PATH": str(tiny_model_dir), "ORGKIT_DATABASE_URL": pg_url}
    words = json.loads(cli("index", "--no-embed", "--json", env=env).stdout)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import json, sys\nfrom orgkit import config\nfrom orgkit.embed import Embedder\n"
         "from orgkit.index import Index\nfrom orgkit.index.queue import fill_queue\n"
         "cfg = config.load()\nindex = Index.of(cfg)\nfingerprint = Embedder.from_config(cfg).fingerprint\n"
         "fill_queue(index, fingerprint)\nindex.conn.execute('BEGIN')\n"
         "print(json.dumps(index.backend.claim_batch(index.conn, fingerprint, 40)), flush=True)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, **env})
    try:
        held = json.loads(holder.stdout.readline())
        assert len(held) == 40
        first = json.loads(cli("index", "--workers", "2", "--quiet", "--json", env=env).stdout)
        assert first["pending"] == 40 and first["embedded"] > 40
        holder.kill()
        holder.wait()
        second = json.loads(cli("index", "--json", "--quiet", env=env).stdout)
        assert second["embedded"] == 40 and second["pending"] == 0
    finally:
        holder.kill()
        holder.wait()
    import psycopg

    with psycopg.connect(pg_url) as conn:
        texts = conn.execute("SELECT count(DISTINCT hash) FROM chunks").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == texts == first["embedded"] + 40
        assert conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0] == 0
    assert words["chunks"] >= texts
    refused = cli("index", "--workers", "2", "--notes", str(notes), env={"ORGKIT_DATABASE_URL": ""})
    assert refused.exit_code == 1 and "--workers needs a shared database" in refused.stderr


def test_a_worker_embeds_its_claim_shortest_first_in_batches_of_bounded_size(pg_url: str, tmp_path: Path,
                                                                           tiny_model: Path) -> None:
    """A claim comes in hash order: embedded as one batch, every text would be padded to the longest."""
    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update
    from orgkit.index.queue import fill_queue, work

    notes = _corpus("manual", tmp_path)
    index = Index.at(notes, tmp_path / "state", pg_url)
    update(index)
    embedder = Embedder.from_config(load(notes))
    embedder.batch_limits = {"max_items": 8}
    embedded: list[list[int]] = []  # each call's texts' token lengths
    real = embedder.embed
    embedder.embed = lambda texts: (embedded.append(embedder.token_lengths(texts)), real(texts))[1]
    queued = fill_queue(index, embedder.fingerprint)
    claims: list[tuple[int, int]] = []
    work(index, embedder, lambda done, tokens: claims.append((done, tokens)))
    assert queued > 64 and sum(done for done, _ in claims) == queued
    assert max(len(lengths) for lengths in embedded) <= 8 and len(embedded) > len(claims)
    assert all(lengths == sorted(lengths) for lengths in embedded)
    assert sum(tokens for _, tokens in claims) == sum(map(sum, embedded))
    assert index.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == queued
    index.close()


def test_a_machine_without_the_notes_answers_from_the_database(cli, pg_url: str, tmp_path: Path,
                                                               tiny_model_dir: Path) -> None:
    from tiny_model import MODEL_NAME

    notes = _corpus("manual", tmp_path)
    model = {"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir), "ORGKIT_DATABASE_URL": pg_url}
    writer = {**model, "ORGKIT_NOTES": str(notes), "ORGKIT_STATE_DIR": str(tmp_path / "writer")}
    reader = {**model, "ORGKIT_NOTES": str(tmp_path / "elsewhere"), "ORGKIT_STATE_DIR": str(tmp_path / "reader")}

    def run(env: dict, *args: str):
        result = cli(*args, "--json", env=env)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    assert run(writer, "index", "--quiet")["pending"] == 0
    hits = run(reader, "search", "tangle a file")
    assert hits and hits == run(writer, "search", "tangle a file")
    ids = [hit["id"] for hit in hits[:3]]
    assert run(reader, "read", *ids, "--depth", "1") == run(writer, "read", *ids, "--depth", "1")
    gathered = run(reader, "context", "tangle a file", "--budget", "800")
    assert gathered["included"] and gathered["mode"] == "hybrid"
    read_back = {doc["id"]: doc["content"] for doc in run(writer, "read", *[n["id"] for n in gathered["included"]])}
    assert all(note["id"] in read_back for note in gathered["included"])
    recalled = run(reader, "recall", "tangle a file", "--budget", "800")  # the memory store is in the database too
    assert [n["id"] for n in recalled["included"]] == [n["id"] for n in gathered["included"]]
    assert all(n["provenance"] == {"origin": "notes"} for n in recalled["included"])
    for refused in (("scan", "tangle"), ("deposit", "--title", "T", "--body", "B"), ("index",), ("backlinks", ids[0])):
        result = cli(*refused, env=reader)
        assert result.exit_code == 1 and result.stderr.count("\n") == 1, refused
        assert f"{refused[0]} needs the notes, and {tmp_path / 'elsewhere'} is not here" in result.stderr
    import os
    import subprocess
    import sys

    server = subprocess.run([sys.executable, "-c", "from orgkit.cli import main; main()", "serve"],
                            input='{"op": "search", "query": "tangle a file"}\n{"op": "scan", "query": "tangle"}\n',
                            capture_output=True, text=True, env={**os.environ, **reader}, timeout=120)
    answers = [json.loads(line) for line in server.stdout.splitlines()]
    assert answers[0]["result"] == hits
    assert answers[1]["error"].startswith("scan needs the notes")
    assert not (tmp_path / "elsewhere").exists()


def test_dense_search_through_the_hnsw_index(pg_url: str, tmp_path: Path, tiny_model: Path, monkeypatch) -> None:
    """Past EXACT_BELOW vectors a model gets an HNSW index, and dense search goes through it."""
    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update
    from orgkit.index.vector_store import VectorStore
    from orgkit.index.vectors import after_embed
    from orgkit.retrieve import search as search_module
    from orgkit.retrieve.search import search
    from orgkit.storage import backend

    notes = _corpus("manual", tmp_path)
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes, tmp_path / "state", pg_url)
    update(index, embedder=embedder)
    exact = [(h.id, round(h.score, 4)) for h in search(index, "tangle a file", mode="dense", embedder=embedder).hits]
    monkeypatch.setattr(backend, "EXACT_BELOW", 10)
    before = index.generation()
    after_embed(index, embedder.fingerprint, 0)
    assert backend.vector_index_name(embedder.fingerprint) in index.backend.vector_indexes(index.conn)
    # a new vector index is a change of the index: a warm process's kept facts are read again
    assert index.generation() > before
    with index.snapshot() as conn:
        conn.execute("SET LOCAL enable_sort = off")  # a graph this small: make the planner show its choice
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT hash FROM vectors WHERE model = '{embedder.fingerprint}' "
            f"ORDER BY vector::vector(24) <=> '[{','.join(['0.2'] * 24)}]'::vector(24) LIMIT 100"))
    assert backend.vector_index_name(embedder.fingerprint) in plan
    through_graph = [(h.id, round(h.score, 4)) for h in search(index, "tangle a file", mode="dense",
                                                               embedder=embedder).hits]
    assert through_graph == exact  # 180 vectors, a candidate list of 200: the graph finds them all
    with index.snapshot() as conn:
        assert search_module._dense_inputs(index, conn, "tangle a file", embedder, None,
                                           search_module.SearchResult(mode="dense"))[0].indexed
    # An update that builds the index records the vectors complete at the generation it moved to.
    update(index, embedder=embedder, rebuild=True)
    assert backend.vector_index_name(embedder.fingerprint) in index.backend.vector_indexes(index.conn)
    with index.snapshot() as conn:
        assert VectorStore(conn, index.backend).complete_at(embedder.fingerprint) == str(index.generation(conn))
    index.close()


def test_both_engines_answer_dense_and_cosines_alike(pg_url: str, tmp_path: Path, tiny_model: Path) -> None:
    """The one storage interface: SQLite's dense search and cosines (a scan of its stored vectors)
    give PostgreSQL's (pgvector), node for node."""
    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update
    from orgkit.storage.backend import first_of_each_node

    notes = _corpus("manual", tmp_path)
    embedder = Embedder.from_config(load(notes))
    query = embedder.embed_query("tangle a file")
    answers = []
    for index in (Index.at(notes, tmp_path / "state"), Index.at(notes, tmp_path / "pg-state", pg_url)):
        update(index, embedder=embedder)
        with index.snapshot() as conn:
            ids = dict(conn.execute("SELECT rowid, id FROM nodes").fetchall())
            nearest = index.backend.dense(conn, embedder.fingerprint, query, 10)
            best = index.backend.cosines(conn, embedder.fingerprint, query, list(ids))
            # each node by its nearest passage, as the database cuts them: the passages' own ranking, cut
            every = index.backend.dense(conn, embedder.fingerprint, query, 10_000)
            per_node = index.backend.dense(conn, embedder.fingerprint, query, 10_000, nodes=7)
            assert per_node == first_of_each_node(every, 7) and len(per_node) == 7
        answers.append(([score for _, _, score in nearest], {ids[n]: cosine for n, cosine in best.items()}))
        index.close()
    (sqlite_nearest, sqlite_best), (pg_nearest, pg_best) = answers
    assert sqlite_nearest == pytest.approx(pg_nearest, abs=1e-5) and len(sqlite_nearest) == 10
    assert sqlite_best == pytest.approx(pg_best, abs=1e-5) and len(sqlite_best) > 10


def test_both_engines_hand_out_the_same_batches_to_embed(pg_url: str, tmp_path: Path, tiny_model: Path) -> None:
    """The one "claim a batch" method: PostgreSQL's work queue and SQLite's backlog name the same
    texts waiting for a vector, and hand them out in the same batches."""
    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update

    notes = _corpus("manual", tmp_path)
    fingerprint = Embedder.from_config(load(notes)).fingerprint
    answers = []
    for index in (Index.at(notes, tmp_path / "state"), Index.at(notes, tmp_path / "pg-state", pg_url)):
        update(index)
        conn = index.conn
        conn.execute("BEGIN")
        try:
            waiting = index.backend.queue_embedding(conn, fingerprint)
            answers.append((waiting, index.backend.claim_batch(conn, fingerprint, 40)))
        finally:
            conn.execute("ROLLBACK")
        index.close()
    (sqlite_waiting, sqlite_batch), (pg_waiting, pg_batch) = answers
    assert sqlite_waiting == pg_waiting > 40
    assert sqlite_batch == pg_batch and len(pg_batch) == 40


def test_the_pool_opens_at_most_its_bound_and_a_caller_past_it_waits_for_one_given_back(pg_url: str) -> None:
    import threading

    from orgkit.storage.postgres import Pool

    pool = Pool(pg_url, False, keep=2, most=2)
    first, second = pool.take(), pool.take()
    got: list = []
    waiting = threading.Thread(target=lambda: got.append(pool.take()))
    waiting.start()
    waiting.join(0.5)
    assert waiting.is_alive() and not got  # two are open: the third caller waits
    first.close()  # given back: the waiting caller gets it
    waiting.join(5)
    assert got == [first]
    second.discard()  # a session ended for good frees its place too
    third = pool.take()
    assert third is not second and third.execute("SELECT 1").fetchone()[0] == 1
    for conn in (first, third):
        conn.close()


def test_the_index_sends_postgresql_statements_written_for_it(pg_url: str, tmp_path: Path, tiny_model: Path) -> None:
    """Indexing, updating, embedding, every lookup, search in each mode (a typo corrected) and context
    send PostgreSQL its own statements (its connection refuses one written with sqlite3's placeholders)."""
    from conftest import write_notes
    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update
    from orgkit.index.store import StoredTexts
    from orgkit.retrieve.context import context
    from orgkit.retrieve.scope import Scope
    from orgkit.retrieve.search import search

    notes = write_notes(tmp_path / "notes", {
        "cats.org": ":PROPERTIES:\n:ID: cats\n:ROAM_ALIASES: Felines\n:END:\n#+title: Cats\n\n"
                    "Cats are small feline pets. See [[id:dogs][Dogs]].\n\n* Kittens\n:PROPERTIES:\n:ID: kittens\n"
                    ":END:\nA kitten is a young cat that sleeps.\n",
        "dogs.org": ":PROPERTIES:\n:ID: dogs\n:END:\n#+title: Dogs\n\nDogs are loyal pets. Unlike [[id:cats][cats]].\n",
        "tomatoes.org": ":PROPERTIES:\n:ID: tomatoes\n:END:\n#+title: Tomatoes\n\nTomatoes need water and compost.\n",
    })
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes, tmp_path / "state", pg_url)
    update(index, embedder=embedder)
    (notes / "dogs.org").write_text((notes / "dogs.org").read_text() + "\nDogs fetch sticks.\n")
    (notes / "tomatoes.org").unlink()
    (notes / "again.org").write_text(":PROPERTIES:\n:ID: cats\n:END:\n#+title: Cats again\n\nA second cat note.\n")
    stats = update(index, embedder=embedder)
    assert stats.removed == 1 and any("duplicate ID cats" in w for w in stats.warnings)
    assert [n["id"] for n in index.nodes()] == ["cats", "cats", "kittens", "dogs"]
    assert index.backlinks("dogs")[0]["source"] == "cats" and index.links("cats")[0]["dest"] == "dogs"
    assert index.locate(["cats"]) == {"cats": ["cats.org", "again.org"]} and index.title_of("kittens") == "Kittens"
    assert index.named(["Felines"])["Felines"][0]["id"] == "cats" and index.passage_counts(embedder.fingerprint)[1]
    assert "sticks" in (StoredTexts(notes, index=index).text("dogs.org") or "")
    for mode in ("lexical", "dense", "hybrid"):
        assert search(index, "kitens sleep", mode=mode, embedder=embedder, scope=Scope()).hits
    found = search(index, "kitens sleep", mode="lexical", embedder=embedder)
    assert found.corrected == "kittens sleep" and found.hits[0].id == "kittens"
    assert context(index, "loyal dogs", embedder=embedder, scope=Scope(), budget=500).included
    index.close()

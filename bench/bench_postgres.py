"""Dense search on the PostgreSQL backend (pgvector HNSW) against exact search and SQLite's matrix.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_postgres.py --sizes 100000 [--queries 200] [--url postgresql://...]

Vectors: braindump's passages embedded with the real model (`orgkit index` into a
scratch state dir, or `--state DIR` of an index already built), then perturbed
copies (each a base vector plus Gaussian noise, renormalised) up to each size, so
the set keeps the corpus's clusters. Queries: other perturbed copies of random
passages, not in the set.

PostgreSQL: a pgserver (PostgreSQL 16, pgvector 0.6) in a temp dir unless
`--url`; the vectors go into orgkit's own schema (passages and vectors, loaded with
binary COPY), the backend's `after_embed` builds the model's HNSW index (timed), and
`PostgresBackend.dense` is timed exactly as search first calls it (`--take`
nearest texts, default search's DENSE_TAKE; ef_search the same), then with the
index turned off (exact).
recall@10 is the HNSW answer's first 10 passages against the exact answer's.
SQLite: the same vectors as one float32 matrix ranked by `dense_ranking` (one
product, one partial sort: what the SQLite backend does once its vector cache is
in memory), with the matrix's size.

    python bench/bench_postgres.py --workers 1,2 [--repeat 2]

Embedding throughput instead: braindump's passage texts embedded from scratch by
`orgkit index --workers N` (the database's work queue), on a fresh database of a
pgserver for each run; one JSON line per run (see `embed_workers`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import pg_server
from corpus import BRAINDUMP

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orgkit.index import Index  # noqa: E402
from orgkit.storage import backend as backend_module  # noqa: E402
from orgkit.storage.backend import EXACT_BELOW, PostgresBackend  # noqa: E402
from orgkit.index.vectors import VectorSet  # noqa: E402
from orgkit.retrieve.search import DENSE_TAKE, POOL, dense_ranking  # noqa: E402

MODEL = "bench-model"


def base_vectors(state: Path | None) -> np.ndarray:
    """The real model's vectors of braindump's passages (indexing a scratch copy when no state is given)."""
    if state is None:
        state = Path(tempfile.mkdtemp(prefix="bench-pg-state-"))
        subprocess.run([sys.executable, "-c", "from orgkit.cli import main; main()", "index", "--notes",
                        str(BRAINDUMP), "--state-dir", str(state), "--quiet", "--json"], check=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL)
    with sqlite3.connect(state / "index.sqlite") as conn:
        blobs = [b for (b,) in conn.execute("SELECT vector FROM vectors")]
    return np.vstack([np.frombuffer(b, dtype=np.float32) for b in blobs])


def perturbed(base: np.ndarray, count: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    picks = rng.integers(0, len(base), count)
    out = base[picks] + rng.normal(0, sigma, (count, base.shape[1])).astype(np.float32)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def load(index: Index, vectors: np.ndarray) -> float:
    """Passages and their vectors into the index's tables (COPY); seconds taken."""
    conn = index.conn
    started = time.perf_counter()
    conn.execute("TRUNCATE chunks, vectors")
    for index_name in index.backend.vector_indexes(conn):
        conn.execute(f"DROP INDEX {index_name}")
    with conn.raw.cursor() as cur:
        with cur.copy("COPY chunks (rowid, node, file, line, body, hash) FROM STDIN") as copy:
            for i in range(len(vectors)):
                copy.write_row((i + 1, i + 1, "bench.org", 1, "", f"h{i}"))
        with cur.copy("COPY vectors (model, hash, vector) FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
            model = MODEL.encode()
            head = struct.pack(">hh", vectors.shape[1], 0)  # pgvector's binary form: dimensions, unused
            big = vectors.astype(">f4")
            for i in range(len(vectors)):
                digest = f"h{i}".encode()
                body = head + big[i].tobytes()
                copy.write(struct.pack(">hi", 3, len(model)) + model + struct.pack(">i", len(digest)) + digest
                           + struct.pack(">i", len(body)) + body)
            copy.write(struct.pack(">h", -1))
    conn.execute("ANALYZE chunks")
    conn.execute("ANALYZE vectors")
    return time.perf_counter() - started


def timed_queries(conn, backend: PostgresBackend, queries: np.ndarray, exact: bool,
                  take: int) -> tuple[list[float], list]:
    seconds, answers = [], []
    for q in queries:
        conn.execute("BEGIN")
        if exact:
            conn.execute("SET LOCAL enable_indexscan = off")
        started = time.perf_counter()
        rows = backend.dense(conn, MODEL, q, take)
        seconds.append(time.perf_counter() - started)
        conn.execute("COMMIT")
        answers.append([chunk for _, chunk, _ in rows[:10]])
    return seconds, answers


def percentiles(seconds: list[float]) -> dict:
    ms = np.array(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 1), "p99_ms": round(float(np.percentile(ms, 99)), 1)}


def embed_workers(workers: list[int], repeat: int) -> None:
    """`orgkit index --workers N` embedding braindump from scratch, each run on a fresh database.

    The words are indexed first (`--no-embed`, not timed), so the timed command
    embeds every passage text through the work queue: its wall time (start-up and
    model load included), the update's own seconds, and embedding's seconds alone
    (tokens over the rate of the last progress line, which counts from the first
    claimed batch after the model is loaded).
    """
    import shutil

    server = pg_server.start()
    try:
        work = Path(tempfile.mkdtemp(prefix="bench-pg-workers-"))
        notes = work / "braindump"
        shutil.copytree(BRAINDUMP, notes)
        for n in workers:
            for k in range(repeat):
                url = pg_server.database(server, f"embed_{n}_{k}")
                env = {**os.environ, "PYTHONPATH": str(REPO), "ORGKIT_DATABASE_URL": url,
                       "ORGKIT_STATE_DIR": str(work / f"state-{n}-{k}")}
                orgkit = [sys.executable, "-c", "from orgkit.cli import main; main()", "index", "--notes", str(notes)]
                subprocess.run([*orgkit, "--no-embed", "--quiet"], env=env, check=True, stdout=subprocess.DEVNULL)
                load_before = os.getloadavg()
                started = time.perf_counter()
                done = subprocess.run([*orgkit, "--workers", str(n), "--json"], env=env, check=True,
                                      capture_output=True, text=True)
                wall = time.perf_counter() - started
                stats = json.loads(done.stdout)
                rates = re.findall(r"([\d,]+) tokens/s", done.stderr)
                embed_s = stats["tokens"] / float(rates[-1].replace(",", "")) if rates else float("nan")
                print(json.dumps({"workers": n, "run": k + 1, "embedded": stats["embedded"],
                                  "tokens": stats["tokens"], "wall_s": round(wall, 1),
                                  "update_s": round(stats["seconds"], 1), "embed_s": round(embed_s, 1),
                                  "texts_per_s_embed": round(stats["embedded"] / embed_s, 1),
                                  "texts_per_s_wall": round(stats["embedded"] / wall, 1),
                                  "load_before": [round(x, 2) for x in load_before],
                                  "load_after": [round(x, 2) for x in os.getloadavg()]}), flush=True)
        shutil.rmtree(work, ignore_errors=True)
    finally:
        pg_server.stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000", help="comma-separated vector counts")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sigma", type=float, default=0.02, help="noise per dimension of a perturbed copy")
    parser.add_argument("--url", help="a PostgreSQL database to use (default: a pgserver in a temp dir)")
    parser.add_argument("--state", type=Path, help="an index of braindump built with the real model")
    parser.add_argument("--ef", default=str(backend_module.MIN_EF_SEARCH),
                        help="comma-separated candidate-list floors (MIN_EF_SEARCH) to time the graph with")
    parser.add_argument("--take", type=int, default=DENSE_TAKE,
                        help="nearest texts asked for (search's first request; ef_search follows it)")
    parser.add_argument("--m", type=int, default=backend_module.HNSW_M, help="the graph's m (links per node)")
    parser.add_argument("--ef-construction", type=int, default=backend_module.HNSW_EF_CONSTRUCTION,
                        help="the graph's candidate list while it is built")
    parser.add_argument("--workers", help="comma-separated worker counts: time `orgkit index --workers N` "
                        "embedding braindump from scratch (fresh database each) instead of the dense-search bench")
    parser.add_argument("--repeat", type=int, default=1, help="runs per worker count (with --workers)")
    args = parser.parse_args()
    backend_module.HNSW_M, backend_module.HNSW_EF_CONSTRUCTION = args.m, args.ef_construction
    if args.workers:
        embed_workers([int(n) for n in args.workers.split(",")], args.repeat)
        return
    rng = np.random.default_rng(0)
    base = base_vectors(args.state)
    url = pg_server.server_url(args.url)
    index = Index.at(BRAINDUMP, Path(tempfile.mkdtemp()), url)
    backend = index.backend
    assert isinstance(backend, PostgresBackend)
    index.conn.execute("SET maintenance_work_mem = '3GB'")  # the graph of 1M vectors built in memory
    for size in [int(s) for s in args.sizes.split(",")]:
        vectors = np.vstack([base, perturbed(base, size - len(base), args.sigma, rng)])[:size]
        queries = perturbed(base, args.queries, args.sigma, rng)
        report = {"size": size, "dims": int(vectors.shape[1]), "queries": args.queries, "base": len(base),
                  "take": args.take, "m": args.m, "ef_construction": args.ef_construction,
                  "load_s": round(load(index, vectors), 1)}
        exact_s, exact = timed_queries(index.conn, backend, queries, exact=True, take=args.take)
        started = time.perf_counter()
        backend.after_embed(index, MODEL, size)
        report["hnsw_build_s"] = round(time.perf_counter() - started, 1)
        assert size < EXACT_BELOW or backend.vector_indexes(index.conn)
        report["postgres_exact"] = percentiles(exact_s)
        for ef in [int(e) for e in args.ef.split(",")]:
            backend_module.MIN_EF_SEARCH = ef
            hnsw_s, hnsw = timed_queries(index.conn, backend, queries, exact=False, take=args.take)
            report[f"postgres_hnsw_ef{ef}"] = {**percentiles(hnsw_s), "recall_at_10": round(float(np.mean(
                [len(set(a) & set(b)) / 10 for a, b in zip(hnsw, exact)])), 4)}
        matrix = VectorSet(0, np.arange(1, size + 1), np.arange(1, size + 1), np.zeros(size, "S1"), vectors)
        sqlite_s = []
        for q in queries:
            started = time.perf_counter()
            dense_ranking(matrix, q, POOL)
            sqlite_s.append(time.perf_counter() - started)
        report["sqlite_matrix"] = {**percentiles(sqlite_s), "matrix_mib": round(vectors.nbytes / 2**20)}
        print(json.dumps(report), flush=True)
    index.close()


if __name__ == "__main__":
    main()

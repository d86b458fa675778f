"""Retrieval quality on both backends: MRR@10 and recall@10 per search mode, SQLite against PostgreSQL.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_postgres_quality.py --notes DIR --state DIR [--url postgresql://...]

DIR is a copy of braindump and STATE its SQLite index, embedded with the model
(`orgkit index --notes DIR --state-dir STATE`). The PostgreSQL index is built
from the same files (words), and given the SQLite index's vectors (same model,
same passage texts: the same vectors orgkit would compute again), so the two
rank the same passages with the same vectors. Every query of
bench/retrieval_dev.json is then searched on both, through `search`.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pg_server import server_url  # noqa: E402
from bench_retrieval import KINDS, evaluate  # noqa: E402

from orgkit.config import load  # noqa: E402
from orgkit.embed import Embedder  # noqa: E402
from orgkit.index import Index, update  # noqa: E402
from orgkit.index.embedding import _finish  # noqa: E402
from orgkit.retrieve.search import MODES, VectorCache, search  # noqa: E402
from orgkit.storage.postgres import vector_literal  # noqa: E402


def copy_vectors(sqlite_state: Path, index: Index, fingerprint: str) -> int:
    import numpy as np

    with sqlite3.connect(sqlite_state / "index.sqlite") as source:
        rows = source.execute("SELECT model, hash, vector FROM vectors WHERE model = ?", (fingerprint,)).fetchall()
    index.conn.executemany("INSERT INTO vectors VALUES (?, ?, ?)",
                           [(m, h, vector_literal(np.frombuffer(v, dtype=np.float32))) for m, h, v in rows])
    _finish(index, fingerprint, type("State", (), {"done": len(rows)})())
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--url")
    args = parser.parse_args()
    embedder = Embedder.from_config(load(args.notes))
    sqlite_index = Index.at(args.notes, args.state)
    pg_index = Index.at(args.notes, Path(tempfile.mkdtemp()), server_url(args.url))
    update(pg_index)
    copied = copy_vectors(args.state, pg_index, embedder.fingerprint)
    queries = json.loads((HERE / "retrieval_dev.json").read_text())["queries"]
    print(f"{len(queries)} queries, {copied} vectors copied; MRR@10 / recall@10 (kinds: {', '.join(KINDS)})")
    for mode in MODES:
        out = {}
        for name, index in (("sqlite", sqlite_index), ("postgres", pg_index)):
            cache = VectorCache()
            out[name] = evaluate(queries, lambda item: [h.id for h in search(
                index, item["query"], mode=mode, limit=10, embedder=embedder, cache=cache).hits])
        print(json.dumps({"mode": mode, **{f"{b}_{k}": round(out[b][k], 4) for b in out for k in ("mrr", "recall")},
                          "mrr_difference": round(abs(out["sqlite"]["mrr"] - out["postgres"]["mrr"]), 4)}),
              flush=True)


if __name__ == "__main__":
    main()

"""The fast tier re-ranked: a static model's first pass, the dense model re-ranking its top hits.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_tier.py --notes DIR --static STATIC_DIR [--pool 20]

STATIC_DIR is a model made by `orgkit model distill`; DIR a copy of braindump
(made there when absent) whose index is brought up to date with the static
model. For each query of bench/retrieval_dev.json the static model's hybrid
search gives `--pool` notes with their best passage; only those passages are
embedded with the dense model (ORGKIT_MODEL / ORGKIT_MODEL_PATH), each distinct
text once, and the notes are re-ranked by the dense model's cosine, alone and
fused with BM25 by hybrid search's own fusion. It reports MRR@10 and recall@10 per
split and query type, and what the re-ranking costs: passages and tokens
embedded by the dense model, and its CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from orgkit.config import load
from orgkit.distill import STATIC_MODEL_NAME
from orgkit.embed import Embedder
from orgkit.index import Index, update
from orgkit.index.store import headings
from orgkit.retrieve.search import (
    POOL, Ranking, VectorCache, fuse, lexical_ranking, lexical_terms, search, title_match,
)

HERE = Path(__file__).resolve().parent
BRAINDUMP = HERE.parents[1] / "shared" / "corpora" / "braindump"
K = 10


class Reranker:
    """The dense model's vectors for passages, embedded on first need and kept by passage."""

    def __init__(self, index: Index, dense: Embedder) -> None:
        self.index, self.dense = index, dense
        self.vectors: dict[int, object] = {}
        self.tokens = 0
        self.cpu = 0.0

    def texts(self, chunks: list[int]) -> dict[int, str]:
        """The text each passage was embedded as (`heading: body`), by passage row."""
        with self.index.snapshot() as conn:
            rows = conn.execute(
                f"SELECT c.rowid, f.title, c.outline, c.body FROM chunks c JOIN files f ON f.path = c.file "
                f"WHERE c.rowid IN ({','.join('?' * len(chunks))})", chunks).fetchall()
            paths = headings(conn, self.index.backend, [(title, outline) for _, title, outline, _ in rows])
        return {r[0]: (f"{h}: {r[3]}" if r[3] else h) for r, h in zip(rows, paths)}

    def embed(self, chunks: list[int]) -> None:
        wanted = [c for c in dict.fromkeys(chunks) if c not in self.vectors]
        if not wanted:
            return
        texts = self.texts(wanted)
        started = time.process_time()
        order = list(texts)
        for picked, vectors, tokens in self.dense.embed_batches([texts[c] for c in order]):
            for i, vector in zip(picked, vectors):
                self.vectors[order[i]] = vector
            self.tokens += tokens
        self.cpu += time.process_time() - started


def ids(index: Index, ranking: Ranking) -> list[str]:
    """The note IDs of a ranking, best first, each once (as search's hits are)."""
    nodes = index.nodes_by_rowid([node for node, _, _ in ranking])
    return list(dict.fromkeys(nodes[node]["id"] for node, _, _ in ranking if node in nodes))


def rankings(index: Index, static: Embedder, reranker: Reranker, query: str, pool: int,
             cache: VectorCache) -> dict[str, list[str]]:
    """Note IDs, best first: the static model's hybrid ranking, and the two re-rankings of its top `pool`.

    "static hybrid" is `search` itself with the static model, so it is what
    `orgkit search` gives with it; the re-ranked hybrid fuses BM25's ranking
    with the dense model's re-ranking by plain reciprocal rank (each at full
    weight), the title match first, as `fuse` does without evidence.
    """
    first = [(h.node, h.chunk, h.score)
             for h in search(index, query, limit=max(pool, K), embedder=static, cache=cache).hits]
    with index.snapshot() as conn:
        terms = lexical_terms(conn, query, index.backend, index.memo)
        lexical = lexical_ranking(conn, query, POOL, terms, index.backend, index.memo)
        named = title_match(index, lexical, query, terms)
    top = first[:pool]
    reranker.embed([chunk for _, chunk, _ in top])
    q = reranker.dense.embed_query(query)
    dense = sorted(((node, chunk, float(reranker.vectors[chunk] @ q)) for node, chunk, _ in top),
                   key=lambda row: -row[2])
    fused = fuse(lexical, dense, named)
    return {"static hybrid": ids(index, first), "re-ranked dense": ids(index, dense),
            "re-ranked hybrid": ids(index, fused)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, required=True, help="a copy of braindump (made when absent)")
    parser.add_argument("--static", type=Path, required=True, help="a model made by `orgkit model distill`")
    parser.add_argument("--pool", type=int, default=20, help="notes the dense model re-ranks per query")
    args = parser.parse_args()
    if not os.environ.get("ORGKIT_MODEL_PATH"):
        raise SystemExit("set ORGKIT_MODEL and ORGKIT_MODEL_PATH to the dense model (see the docstring)")
    if not args.notes.exists():
        shutil.copytree(BRAINDUMP, args.notes)
    static = Embedder(STATIC_MODEL_NAME, args.static.resolve())
    dense = Embedder.from_config(load(args.notes))
    index = Index.at(args.notes)
    update(index, embedder=static)
    queries = [q for q in json.loads((HERE / "retrieval_dev.json").read_text())["queries"]
               if q.get("relevant") and q.get("corpus") != "notes"]  # braindump's, each with its answers
    reranker, cache = Reranker(index, dense), VectorCache()
    dense.load()
    results = [(q, rankings(index, static, reranker, q["query"], args.pool, cache)) for q in queries]
    for split in ("tuning", "held-out"):
        chosen = [(q, r) for q, r in results if q["split"] == split]
        print(f"\n{split}: {len(chosen)} queries, top {K}, re-ranking {args.pool} notes")
        print(f"| ranking | MRR@{K} | recall@{K} | MRR keyword | MRR paraphrase | MRR question |")
        print("|---|---|---|---|---|---|")
        for name in ("static hybrid", "re-ranked dense", "re-ranked hybrid"):
            reciprocal, recall, by_kind = [], [], {}
            for query, ranked in chosen:
                top, relevant = ranked[name][:K], set(query["relevant"])
                rank = next((i for i, hit in enumerate(top, 1) if hit in relevant), None)
                reciprocal.append(1 / rank if rank else 0.0)
                recall.append(len(relevant & set(top)) / len(relevant))
                by_kind.setdefault(query["kind"], []).append(reciprocal[-1])
            kinds = {k: sum(v) / len(v) for k, v in by_kind.items()}
            print(f"| {name} | {sum(reciprocal) / len(chosen):.3f} | {sum(recall) / len(chosen):.3f} | "
                  f"{kinds.get('keyword', 0):.3f} | {kinds.get('paraphrase', 0):.3f} | "
                  f"{kinds.get('question', 0):.3f} |")
    distinct = len(reranker.vectors)
    print(f"\nre-ranking cost: {distinct:,} distinct passages embedded by {dense.name} "
          f"({reranker.tokens:,} tokens, {reranker.cpu:.1f} s CPU) for {len(queries)} queries; a query whose "
          f"{args.pool} passages have no dense vector yet embeds about {reranker.tokens / distinct * args.pool:,.0f} "
          f"tokens, {reranker.cpu / distinct * args.pool:.2f} s CPU")


if __name__ == "__main__":
    main()

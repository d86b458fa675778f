"""Retrieval quality on braindump: MRR@10 and recall@10 per search mode and query kind.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_retrieval.py [--notes DIR] [--sweep | --compare | --latency | --floor [--manual DIR]]

Without --notes, braindump is copied to a temporary directory and indexed
there (embedding it takes a few minutes on two cores); with --notes DIR, the
copy is made there once and its index reused by later runs. Results are given
for each split of the query set: `tuning` (the queries the fusion was chosen
on) and `held-out` (never used to choose anything; `batch 2` of it was written
after the first fusion was chosen and before any ranking ran on it).

--sweep ranks the fusion methods that were tried, over their constants, on the
tuning split only (that is how the method in search.py was chosen). --compare
then gives every method, at the constants the sweep chose, on both splits.
--latency times warm in-process search (model and vectors loaded once) over
every query, twice, per mode. --floor gives the relevance floor's decisions on
both splits: in-corpus queries kept (and targets lost: found in the top ten
but marked not relevant) and off-topic queries rejected, under the model and
by words only, over braindump and (with --manual DIR, a copy of notes/ made
there once) over the bundled manual.

The default run gives MRR@10 per method (lexical, dense, hybrid before the
typo correction and stem title match, hybrid) and kind, per split.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import tempfile
import time
from itertools import product
from pathlib import Path
from typing import Callable

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index, update
from orgkit.index.vocab import Term
from orgkit.retrieve.search import (
    MODES, POOL, VectorCache, dense_ranking, lexical_ranking, lexical_terms, search, title_match,
)

HERE = Path(__file__).resolve().parent
BRAINDUMP = HERE.parents[1] / "shared" / "corpora" / "braindump"
K = 10
KINDS = ("keyword", "misspelled", "word form", "paraphrase", "question")
MANUAL = HERE.parent / "notes"
QUESTION_WORDS = {"how", "what", "why", "when", "where", "which", "who", "does", "do", "is", "can", "should"}


def evaluate(queries: list[dict], ranked: Callable[[dict], list[str]]) -> dict:
    """MRR@K and recall@K over `queries`, overall and per kind; `ranked(query)` gives node IDs."""
    reciprocal: dict[str, list[float]] = {k: [] for k in KINDS}
    recall: dict[str, list[float]] = {k: [] for k in KINDS}
    for item in queries:
        hits = ranked(item)[:K]
        relevant = set(item["relevant"])
        rank = next((i for i, hit in enumerate(hits, 1) if hit in relevant), None)
        reciprocal[item["kind"]].append(1 / rank if rank else 0.0)
        recall[item["kind"]].append(len(relevant & set(hits)) / len(relevant))
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
    return {"mrr": mean(sum(reciprocal.values(), [])), "recall": mean(sum(recall.values(), [])),
            **{k: mean(v) for k, v in reciprocal.items()}, **{"r_" + k: mean(v) for k, v in recall.items()}}


def row(name: str, r: dict) -> str:
    return (f"| {name} | {r['mrr']:.3f} | {r['recall']:.3f} | "
            + " | ".join(f"{r[k]:.3f}" for k in KINDS) + " | "
            + " | ".join(f"{r['r_' + k]:.3f}" for k in KINDS) + " |")


def header(first: str, margin: bool = False) -> str:
    columns = [first, "MRR@10", "recall@10", *(f"MRR {k}" for k in KINDS), *(f"recall {k}" for k in KINDS)]
    columns += ["margin"] if margin else []
    return "| " + " | ".join(columns) + " |\n" + "|---" * len(columns) + "|"


# Fusion methods over one query's cached rankings: (lexical, dense, title match, query) -> node order.

def rrf(lex, den, title, query, k=5.0, w=0.5):
    """Weighted reciprocal rank (the fusion before this one): BM25 at weight w."""
    s: dict[int, float] = {}
    for weight, ranking in ((w, lex), (1.0, den)):
        for rank, (n, _, _) in enumerate(ranking, 1):
            s[n] = s.get(n, 0.0) + weight / (k + rank)
    return sorted(s, key=lambda n: -s[n])


def rrf_typed(lex, den, title, query, k=2.0, w_keyword=0.5, w_natural=0.5, words=3):
    """RRF with BM25's weight set by whether the query reads as natural language."""
    terms = re.findall(r"\w+", query.lower())
    natural = "?" in query or (terms and terms[0] in QUESTION_WORDS) or len(terms) >= words
    return rrf(lex, den, title, query, k, w_natural if natural else w_keyword)


def _normalised(ranking, how):
    values = [s for _, _, s in ranking]
    if not values:
        return {}
    if how == "minmax":
        lo, hi = min(values), max(values)
        return {n: (s - lo) / (hi - lo) if hi > lo else 1.0 for n, _, s in ranking}
    if how == "max":
        return {n: s / max(values) if max(values) > 0 else 0.0 for n, _, s in ranking}
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
    return {n: (s - mean) / sd for n, _, s in ranking}


def convex(lex, den, title, query, alpha=0.8, how="z", title_first=False):
    """alpha * dense + (1 - alpha) * BM25 on normalised scores; a missing node takes the list's lowest."""
    parts = [(1 - alpha, _normalised(lex, how)), (alpha, _normalised(den, how))]
    nodes = {n for _, z in parts for n in z}
    s = {n: sum(w * z.get(n, min(z.values(), default=0.0)) for w, z in parts) for n in nodes}
    order = sorted(s, key=lambda n: -s[n])
    return _title_first(order, title) if title_first else order


def _title_first(order, title):
    return order if title is None else [title] + [n for n in order if n != title]


def confident(lex, den, title, query, ratio=1.5, base="dense"):
    """Dense (or RRF) order, BM25's top node first when its score is `ratio` times the second's."""
    order = [n for n, _, _ in den] if base == "dense" else rrf(lex, den, title, query)
    if len(lex) >= 2 and lex[0][2] >= ratio * lex[1][2]:
        order = _title_first(order, lex[0][0])
    return order


def title_boost(lex, den, title, query, base="dense", k=5.0, w=0.5):
    """Dense (or RRF) order, an exact title match among BM25's top hits first."""
    return _title_first([n for n, _, _ in den] if base == "dense" else rrf(lex, den, title, query, k, w), title)


def intersect(lex, den, title, query, top=20, k=5.0, w=0.5):
    """RRF where BM25 adds to a dense hit only when the node is in dense's top `top`."""
    in_dense = {n for n, _, _ in den[:top]}
    s = {n: 1.0 / (k + rank) for rank, (n, _, _) in enumerate(den, 1)}
    for rank, (n, _, _) in enumerate(lex, 1):
        if n in in_dense or n not in s:
            s[n] = s.get(n, 0.0) + w / (k + rank)
    return sorted(s, key=lambda n: -s[n])


def shipped(lex, den, title, query):
    """search.py's fusion before the evidence-weighted one (bench_blind.py measures that one)."""
    return convex(lex, den, title, query, alpha=0.8, how="z", title_first=True)


# Each method with the grid it was swept over on the tuning split.
SWEEPS: dict[str, tuple[Callable, dict[str, list]]] = {
    "rrf": (rrf, {"k": [1, 2, 3, 5, 10, 20, 60], "w": [0.1, 0.25, 0.5, 0.75, 1.0]}),
    "rrf by query type": (rrf_typed, {"k": [2, 5], "w_keyword": [0.5, 1.0], "w_natural": [0.1, 0.25, 0.5],
                                      "words": [3, 4, 5]}),
    "convex, min-max": (convex, {"how": ["minmax"], "alpha": [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9]}),
    "convex, max": (convex, {"how": ["max"], "alpha": [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9]}),
    "convex, z-score": (convex, {"how": ["z"], "alpha": [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9]}),
    "confident BM25 top first": (confident, {"base": ["dense", "rrf"], "ratio": [1.2, 1.3, 1.5, 2.0]}),
    "exact title first": (title_boost, {"base": ["dense", "rrf"]}),
    "rrf, BM25 only inside dense's top N": (intersect, {"top": [5, 10, 20, 50], "w": [0.5, 1.0]}),
    "rrf + exact title first": (lambda *a, **kw: _title_first(rrf(*a, **kw), a[2]),
                                {"k": [2, 5], "w": [0.25, 0.5]}),
    "convex + exact title first": (convex, {"how": ["minmax", "max", "z"], "title_first": [True],
                                            "alpha": [0.7, 0.75, 0.8, 0.85, 0.9]}),
}


def margin(r: dict, single: dict) -> float:
    """The worst per-kind MRR difference from the better single mode (>= 0: the goal is met)."""
    return min(r[k] - single[k] for k in KINDS)


class Runs:
    """Each query's lexical and dense rankings, computed once, and the ID of every ranked node."""

    def __init__(self, index: Index, embedder: Embedder, queries: list[dict]):
        cache = VectorCache()
        self.rankings: dict[str, tuple] = {}
        with index.snapshot() as conn:
            vectors = cache.get(index, embedder.fingerprint, conn)
            for item in queries:
                lex = lexical_ranking(conn, item["query"], POOL, backend=index.backend, memo=index.memo)
                den = dense_ranking(vectors, embedder.embed_query(item["query"]), POOL)
                self.rankings[item["query"]] = (lex, den, title_match(conn, lex, item["query"]))
        rows = {n for lex, den, _ in self.rankings.values() for n, _, _ in lex + den}
        self.ids = {row: node["id"] for row, node in index.nodes_by_rowid(sorted(rows)).items()}

    def ranked(self, method: Callable, **constants) -> Callable[[dict], list[str]]:
        def ids(item: dict) -> list[str]:
            lex, den, title = self.rankings[item["query"]]
            return list(dict.fromkeys(self.ids[n] for n in method(lex, den, title, item["query"], **constants)))
        return ids


def sweep(runs: Runs, tuning: list[dict]) -> dict[str, dict]:
    """Per method, the constants with the best worst-kind margin on tuning, then the best MRR.

    The margin is the worst per-kind MRR difference from the better single
    mode: the goal is that no kind of query is served worse than by the
    better of dense and lexical alone.
    """
    single = {k: max(evaluate(tuning, runs.ranked(m))[k] for m in (_lexical, _dense)) for k in KINDS}
    chosen = {}
    for name, (method, grid) in SWEEPS.items():
        print(f"\n{name} (tuning)\n" + header("constants", margin=True))
        best = None
        for values in product(*grid.values()):
            constants = dict(zip(grid, values))
            r = evaluate(tuning, runs.ranked(method, **constants))
            print(row(", ".join(f"{k}={v}" for k, v in constants.items()), r) + f" {margin(r, single):+.3f} |")
            key = (round(margin(r, single), 6), round(r["mrr"], 6))
            if best is None or key > best[0]:
                best = (key, constants)
        chosen[name] = best[1]
        print(f"chosen: {best[1]} (margin {best[0][0]:+.3f}, MRR {best[0][1]:.3f})")
    return chosen


def _lexical(lex, den, title, query):
    return [n for n, _, _ in lex]


def _dense(lex, den, title, query):
    return [n for n, _, _ in den]


# The constants `--sweep` chose for each method (ties broken by the grid's order).
CHOSEN = {
    "rrf (before: k=5, w=0.5)": (rrf, {"k": 5, "w": 0.5}),
    "rrf": (rrf, {"k": 1, "w": 0.5}),
    "rrf by query type": (rrf_typed, {"k": 2, "w_keyword": 0.5, "w_natural": 0.5, "words": 3}),
    "convex, min-max": (convex, {"how": "minmax", "alpha": 0.75}),
    "convex, max": (convex, {"how": "max", "alpha": 0.8}),
    "convex, z-score": (convex, {"how": "z", "alpha": 0.8}),
    "confident BM25 top first": (confident, {"base": "rrf", "ratio": 1.5}),
    "exact title first": (title_boost, {"base": "rrf"}),
    "rrf, BM25 only inside dense's top N": (intersect, {"top": 20, "w": 0.5}),
    "rrf + exact title first": (lambda *a, **kw: _title_first(rrf(*a, **kw), a[2]), {"k": 2, "w": 0.5}),
    "convex + exact title first, min-max": (convex, {"how": "minmax", "alpha": 0.75, "title_first": True}),
    "convex + exact title first, max": (convex, {"how": "max", "alpha": 0.8, "title_first": True}),
    "convex + exact title first, z-score (shipped before)": (shipped, {}),
}


def compare(runs: Runs, splits: dict[str, list[dict]]) -> None:
    for split, chosen in splits.items():
        print(f"\n{split}: {len(chosen)} queries\n" + header("method", margin=True))
        single = {k: max(evaluate(chosen, runs.ranked(m))[k] for m in (_lexical, _dense)) for k in KINDS}
        for name, (method, constants) in {"lexical": (_lexical, {}), "dense": (_dense, {}), **CHOSEN}.items():
            r = evaluate(chosen, runs.ranked(method, **constants))
            print(row(name, r) + f" {margin(r, single):+.3f} |")


def latency(index: Index, embedder: Embedder, queries: list[dict]) -> None:
    cache = VectorCache()
    search(index, "warm up", embedder=embedder, cache=cache)
    for mode in MODES:
        times = []
        for item in queries * 2:
            start = time.perf_counter()
            search(index, item["query"], mode=mode, limit=K, embedder=embedder, cache=cache)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        print(f"{mode}: median {statistics.median(times):.1f} ms, p90 {times[int(len(times) * 0.9)]:.1f} ms "
              f"({len(times)} searches)")


def hybrid_before(index: Index, embedder: Embedder, cache: VectorCache) -> Callable[[dict], list[str]]:
    """Hybrid ranking as it was before typo correction and stem title matching (same fusion)."""
    def ranked(item: dict) -> list[str]:
        query = item["query"]
        with index.snapshot() as conn:
            exact = [Term(t.word, t.stem, t.docs) for t in lexical_terms(conn, query, index.backend, index.memo)]
            lex = lexical_ranking(conn, query, POOL, exact)
            vectors = cache.get(index, embedder.fingerprint, conn)
            den = dense_ranking(vectors, embedder.embed_query(query), POOL)
            fused = shipped(lex, den, _exact_title(conn, lex, query), query)
        nodes = index.nodes_by_rowid(fused[: K * 2])
        return list(dict.fromkeys(nodes[n]["id"] for n in fused[: K * 2] if n in nodes))
    return ranked


def _exact_title(conn, lexical, query: str):
    """The title rule before: BM25's top three, a title that is the query's words in order."""
    words = [w.lower() for w in re.findall(r"\w+", query)]
    top = [node for node, _, _ in lexical[:3]]
    if not words or not top:
        return None
    titles = dict(conn.execute(
        f"SELECT rowid, title FROM nodes WHERE rowid IN ({','.join('?' * len(top))})", top).fetchall())
    return next((n for n in top if [w.lower() for w in re.findall(r"\w+", titles.get(n) or "")] == words), None)


def per_kind(index: Index, embedder: Embedder, splits: dict[str, list[dict]]) -> None:
    """MRR@10 per method and kind, per split."""
    cache = VectorCache()
    methods = {mode: (lambda mode: lambda item: [h.id for h in search(
        index, item["query"], mode=mode, limit=K, embedder=embedder, cache=cache).hits])(mode)
        for mode in ("lexical", "dense")}
    methods["hybrid before"] = hybrid_before(index, embedder, cache)
    methods["hybrid"] = lambda item: [h.id for h in search(
        index, item["query"], limit=K, embedder=embedder, cache=cache).hits]
    for split, chosen in splits.items():
        counts = ", ".join(f"{sum(q['kind'] == k for q in chosen)} {k}" for k in KINDS)
        print(f"\n{split}: {len(chosen)} queries ({counts}), MRR@10\n"
              "| method | all | " + " | ".join(KINDS) + " |\n" + "|---" * (len(KINDS) + 2) + "|")
        results = {name: evaluate(chosen, ranked) for name, ranked in methods.items()}
        for name, r in results.items():
            print(f"| {name} | {r['mrr']:.3f} | " + " | ".join(f"{r[k]:.3f}" for k in KINDS) + " |")
        best = {k: max(results["lexical"][k], results["dense"][k]) for k in KINDS}
        print("hybrid minus the better single method per kind: "
              + ", ".join(f"{k} {results['hybrid'][k] - best[k]:+.3f}" for k in KINDS))


def floor_report(indexes: dict[str, Index], embedder: Embedder, queries: list[dict]) -> None:
    """The floor's decisions per corpus, split and mode: in-corpus kept, targets lost, off-topic rejected."""
    print("\n| corpus | split | ranking | in-corpus kept | targets lost | off-topic rejected |\n"
          "|---|---|---|---|---|---|")
    cache = VectorCache()
    for corpus, index in indexes.items():
        for split in ("tuning", "held-out"):
            chosen = [q for q in queries if q.get("corpus", "braindump") == corpus and q["split"] == split]
            for mode in ("hybrid", "lexical"):
                kept = lost = rejected = 0
                for item in chosen:
                    found = search(index, item["query"], mode=mode, limit=K, embedder=embedder, cache=cache)
                    if not item["relevant"]:
                        rejected += not found.relevant
                        continue
                    kept += found.relevant
                    targets = [h for h in found.hits if h.id in item["relevant"]]
                    lost += bool(targets) and not any(h.relevant for h in targets)
                inside = sum(bool(q["relevant"]) for q in chosen)
                print(f"| {corpus} | {split} | {mode if mode == 'lexical' else 'hybrid (model)'} | "
                      f"{kept}/{inside} | {lost} | {rejected}/{len(chosen) - inside} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, help="an indexed copy of braindump to reuse")
    parser.add_argument("--manual", type=Path, help="with --floor: where a copy of notes/ is indexed and reused")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--sweep", action="store_true", help="every fusion tried, over its constants, on tuning only")
    what.add_argument("--compare", action="store_true", help="every fusion tried, at its chosen constants, on both splits")
    what.add_argument("--latency", action="store_true", help="warm in-process search time per mode")
    what.add_argument("--floor", action="store_true", help="the relevance floor's decisions on both splits")
    args = parser.parse_args()
    if not os.environ.get("ORGKIT_MODEL_PATH"):
        raise SystemExit("set ORGKIT_MODEL and ORGKIT_MODEL_PATH (see the docstring)")
    notes = args.notes or Path(tempfile.mkdtemp(prefix="orgkit-retrieval-")) / "braindump"
    if not notes.exists():
        shutil.copytree(BRAINDUMP, notes)
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes)
    update(index, embedder=embedder)
    every = json.loads((HERE / "retrieval_dev.json").read_text())["queries"]
    if args.floor:
        indexes = {"braindump": index}
        if args.manual:
            if not args.manual.exists():
                shutil.copytree(MANUAL, args.manual)
            indexes["notes"] = Index.at(args.manual)
            update(indexes["notes"], embedder=embedder)
        return floor_report(indexes, embedder, every)
    queries = [q for q in every if q["relevant"] and q.get("corpus", "braindump") == "braindump"]
    splits = {"tuning": [q for q in queries if q["split"] == "tuning"],
              "held-out": [q for q in queries if q["split"] == "held-out"],
              "held-out, batch 1": [q for q in queries if q["split"] == "held-out" and not q.get("batch")],
              "held-out, batch 2": [q for q in queries if q.get("batch") == 2],
              "held-out, batch 3": [q for q in queries if q["split"] == "held-out" and q.get("batch") == 3]}
    if args.latency:
        print("the 170 queries of batches 1 and 2 (as before this batch):")
        latency(index, embedder, [q for q in queries if q.get("batch") != 3])
        print("every in-corpus query and every off-topic one over braindump:")
        return latency(index, embedder, [q for q in every if q.get("corpus", "braindump") == "braindump"])
    if args.sweep or args.compare:
        old_kinds = ("keyword", "paraphrase", "question")
        runs = Runs(index, embedder, [q for q in queries if q["kind"] in old_kinds])
        splits = {name: [q for q in chosen if q["kind"] in old_kinds] for name, chosen in splits.items()
                  if "batch 3" not in name}
        if args.sweep:
            sweep(runs, splits["tuning"])
        else:
            compare(runs, splits)
        return
    per_kind(index, embedder, {**splits, "all": queries})


if __name__ == "__main__":
    main()

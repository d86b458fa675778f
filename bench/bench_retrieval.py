"""Retrieval quality on braindump: MRR@10 and recall@10 per search mode.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_retrieval.py [--notes DIR]

Without --notes, braindump is copied to a temporary directory and indexed
there (embedding it takes a few minutes on two cores); with --notes DIR, the
copy is made there once and its index reused by later runs. Results are given
for each split of the query set: `tuning` (the queries the fusion constants
were chosen on) and `held-out` (written afterwards and never tuned on).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index, update
from orgkit.retrieve.search import MODES, VectorCache, search

HERE = Path(__file__).resolve().parent
BRAINDUMP = HERE.parents[1] / "shared" / "corpora" / "braindump"
K = 10


def evaluate(index: Index, embedder: Embedder, queries: list[dict], mode: str) -> dict:
    cache = VectorCache()
    reciprocal, recall = [], []
    by_kind: dict[str, list[float]] = {}
    for item in queries:
        hits = [h.id for h in search(index, item["query"], mode=mode, limit=K, embedder=embedder,
                                     cache=cache).hits]
        relevant = set(item["relevant"])
        rank = next((i for i, hit in enumerate(hits, 1) if hit in relevant), None)
        reciprocal.append(1 / rank if rank else 0.0)
        recall.append(len(relevant & set(hits)) / len(relevant))
        by_kind.setdefault(item["kind"], []).append(reciprocal[-1])
    return {"mrr": sum(reciprocal) / len(queries), "recall": sum(recall) / len(queries),
            "mrr_by_kind": {k: sum(v) / len(v) for k, v in sorted(by_kind.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, help="an indexed copy of braindump to reuse")
    args = parser.parse_args()
    if not os.environ.get("ORGKIT_MODEL_PATH"):
        raise SystemExit("set ORGKIT_MODEL and ORGKIT_MODEL_PATH (see the docstring)")
    notes = args.notes or Path(tempfile.mkdtemp(prefix="orgkit-retrieval-")) / "braindump"
    if not notes.exists():
        shutil.copytree(BRAINDUMP, notes)
    embedder = Embedder.from_config(load(notes))
    index = Index.at(notes)
    update(index, embedder=embedder)
    queries = json.loads((HERE / "retrieval_dev.json").read_text())["queries"]
    for split in ("tuning", "held-out", None):
        chosen = [q for q in queries if split is None or q["split"] == split]
        counts = ", ".join(f"{sum(q['kind'] == k for q in chosen)} {k}" for k in ("keyword", "paraphrase", "question"))
        print(f"\n{split or 'all'}: {len(chosen)} queries ({counts}), top {K}")
        print(f"| mode | MRR@{K} | recall@{K} | MRR keyword | MRR paraphrase | MRR question |")
        print("|---|---|---|---|---|---|")
        for mode in MODES[::-1]:
            r = evaluate(index, embedder, chosen, mode)
            kinds = r["mrr_by_kind"]
            print(f"| {mode} | {r['mrr']:.3f} | {r['recall']:.3f} | {kinds.get('keyword', 0):.3f} | "
                  f"{kinds.get('paraphrase', 0):.3f} | {kinds.get('question', 0):.3f} |")


if __name__ == "__main__":
    main()

"""Warm in-process search time per mode, wall and CPU, over the braindump queries of retrieval_dev.json.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \
    python bench/bench_search_latency.py --notes DIR [--queries FILE]

DIR is an indexed copy of braindump (as bench_retrieval.py --notes makes).
Only `search` is used, so the same script times an older orgkit (run it with
that checkout on PYTHONPATH) for a before/after comparison. CPU time (all
threads of the process) moves less than wall time when other work shares the
machine's cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index
from orgkit.retrieve.search import VectorCache, search

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--queries", type=Path, default=HERE / "retrieval_dev.json")
    args = parser.parse_args()
    queries = [q["query"] for q in json.loads(args.queries.read_text())["queries"]
               if q.get("corpus", "braindump") == "braindump"]
    index, cache = Index.at(args.notes), VectorCache()
    embedder = Embedder.from_config(load(args.notes))
    search(index, "warm up", embedder=embedder, cache=cache)
    for mode in ("lexical", "dense", "hybrid"):
        wall, cpu = [], []
        for query in queries * 2:
            w, c = time.perf_counter(), time.process_time()
            search(index, query, mode=mode, limit=10, embedder=embedder, cache=cache)
            wall.append((time.perf_counter() - w) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        print(f"{mode}: wall median {statistics.median(wall):.1f} ms, CPU median {statistics.median(cpu):.1f} ms "
              f"({len(wall)} searches)")


if __name__ == "__main__":
    main()

"""What recording corrections adds to `orgkit index`: nothing without generated notes,
and the cost of comparing every generated node when there are some.

    python bench/bench_feedback.py [--generated N]

Copies braindump to bench/out/feedback-corpus, indexes it (words only), then times
`observe` (the index hook) with no generation record, and with N file nodes recorded
as generated (a tenth of them edited), first run (events appended) and second run
(nothing new). Median of 5 runs each.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time

from corpus import BRAINDUMP, REPO

from orgkit import config
from orgkit.feedback.generated import Generator, record_generated
from orgkit.feedback.observe import IndexLookup, observe
from orgkit.feedback.paths import feedback_dir
from orgkit.index import Index, update
from orgkit.vault import Vault


def _median(func, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--generated", type=int, default=500)
    args = parser.parse_args()
    dest = REPO / "bench" / "out" / "feedback-corpus"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(BRAINDUMP, dest)
    cfg = config.load(dest, env={})
    index = Index.at(dest)
    update(index)
    lookup = IndexLookup(index)
    print(f"no generation record: {_median(lambda: observe(cfg, lookup)) * 1000:.2f} ms")
    nodes = [n for n in Vault.load(dest).nodes if n.level == 0][:args.generated]
    for node in nodes:
        record_generated(cfg, file=node.file, node_id=node.id, node_type="claim",
                         generator=Generator("extractor", "bench", "1"), source_path=f"src/{node.file}")
    for node in nodes[::10]:
        path = dest / node.file
        path.write_text(path.read_text(encoding="utf-8") + "\nAn added line.\n", encoding="utf-8")
    update(index)
    start = time.perf_counter()
    first = observe(cfg, lookup)
    print(f"{len(nodes)} generated nodes, first run: {(time.perf_counter() - start) * 1000:.1f} ms, "
          f"{len(first.events)} events")
    print(f"{len(nodes)} generated nodes, unchanged: {_median(lambda: observe(cfg, lookup)) * 1000:.1f} ms")
    shutil.rmtree(feedback_dir(cfg))


if __name__ == "__main__":
    main()

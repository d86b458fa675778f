"""Fit hybrid fusion's weights: P(a ranking's top note is right) from the evidence search has for it.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \\
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \\
    python bench/fit_fusion.py --braindump DIR --manual DIR [--enews DIR ... --roamdaily DIR]

DIR: braindump and the manual as notes, indexed with the model
(`python bench/blind_corpora.py braindump DIR`, then `orgkit index --notes DIR`).
Only the fitting sets are read: the blind manual and braindump_fit sets (with
their typo and word-form variants) and bench/retrieval_dev.json's braindump
queries; with any other fitting corpus (enews, elpadocs, litnotes and agenda
built without IDs), its sets as bench_floor.py reads them and the other sets
of braindump and the manual too. For each in-corpus query, hybrid search's evidence (the coverage of
BM25's top passage, the confidence of dense's top cosine) and whether each
ranking's top note answers it; a logistic curve per ranking, fitted by
Newton's method, gives fusion.LEXICAL_FIT and fusion.DENSE_FIT. The evidence
does not depend on the weights, so the fit does not feed on itself.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from bench_blind import notes_corpus, queries
from bench_floor import SETS
from blind_corpora import matcher

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index
from orgkit.retrieve import fusion
from orgkit.retrieve.search import VectorCache, search

HERE = Path(__file__).resolve().parent


# The fitting corpora beyond braindump and the manual (their sets as bench_floor.py reads them), and those
# built without IDs, whose targets are judged by file and line.
MORE = [corpus for corpus in SETS if corpus not in ("braindump", "manual")]
WITHOUT_IDS = frozenset({"enews", "elpadocs", "litnotes", "agenda"})


def fitting_items(braindump: Path, manual: Path, more: dict[str, Path] | None = None) -> list[tuple[Path, str, object]]:
    """(notes, query, answers) for every in-corpus query of the fitting sets (of `more` corpora too, each
    as notes)."""
    out = []
    for name, notes in (("manual", manual), ("braindump_fit", braindump)):
        out += [(notes, q["query"], matcher(notes_corpus(name), notes, q)) for q in queries(name) if q["target"]]
    dev = json.loads((HERE / "retrieval_dev.json").read_text())["queries"]
    out += [(braindump, q["query"], lambda hit, rel=set(q["relevant"]): hit["id"] in rel)
            for q in dev if q.get("relevant") and q.get("corpus") != "notes"]
    if more is None:
        return out
    sets = [("braindump_fit2", braindump, True), ("braindump_sections", braindump, True), ("manual_fit2", manual, True)]
    for corpus, notes in more.items():
        names = [Path(name).stem for name in SETS[corpus] if not name.endswith("_typos.json")]  # typos: queries()
        sets += [(name, notes, corpus not in WITHOUT_IDS) for name in names]
    for name, notes, ids in sets:
        out += [(notes, q["query"], matcher(notes_corpus(name), notes, q, ids)) for q in queries(name) if q["target"]]
    return out


def evidence(items: list[tuple[Path, str, object]]) -> list[tuple[float, float, bool, bool]]:
    """Per query: (coverage, confidence) as hybrid search weighed them, and whether BM25's and dense's top is right."""
    seen: list[tuple[float, float]] = []
    weigh = fusion.trust

    def recording(coverage: float, confidence: float, agree: bool) -> fusion.Trust:
        seen.append((coverage, confidence))
        return weigh(coverage, confidence, agree)

    fusion.trust = recording
    opened: dict[Path, tuple[Index, VectorCache, Embedder]] = {}
    rows = []
    for notes, query, answers in items:
        if notes not in opened:
            opened[notes] = (Index.at(notes), VectorCache(), Embedder.from_config(load(notes)))
        index, cache, embedder = opened[notes]
        seen.clear()
        search(index, query, embedder=embedder, cache=cache)
        if not seen:
            continue
        right = []
        for mode in ("lexical", "dense"):
            hits = search(index, query, mode=mode, limit=1, embedder=embedder, cache=cache).hits
            right.append(bool(hits) and answers({"id": hits[0].id, "file": hits[0].file, "line": hits[0].line}))
        rows.append((*seen[0], *right))
    fusion.trust = weigh
    for index, _, _ in opened.values():
        index.close()
    return rows


def logistic(x: np.ndarray, y: np.ndarray, penalty: float = 0.1) -> tuple[float, float]:
    """(intercept, slope) of P(y) = 1 / (1 + exp(-(intercept + slope x))), the slope lightly penalised."""
    a = np.c_[np.ones(len(x)), x]
    beta = np.zeros(2)
    ridge = np.diag([0.0, penalty])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-a @ beta))
        beta -= np.linalg.solve(a.T @ (a * (p * (1 - p))[:, None]) + ridge, a.T @ (p - y) + ridge @ beta)
    return round(float(beta[0]), 2), round(float(beta[1]), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--braindump", type=Path, required=True)
    parser.add_argument("--manual", type=Path, required=True)
    for corpus in MORE:
        parser.add_argument(f"--{corpus}", type=Path, help=f"{corpus} as notes: its fitting sets too, and the "
                            "other sets of braindump and the manual")
    args = parser.parse_args()
    more = {corpus: getattr(args, corpus) for corpus in MORE if getattr(args, corpus)}
    rows = np.array(evidence(fitting_items(args.braindump, args.manual, more or None)), dtype=float)
    print(f"{len(rows)} queries")
    for name, column, right in (("LEXICAL_FIT", 0, 2), ("DENSE_FIT", 1, 3)):
        print(f"{name} = {logistic(rows[:, column], rows[:, right])}")
        for low in np.arange(0.0, 1.0, 0.2):
            band = rows[(rows[:, column] >= low) & (rows[:, column] < low + 0.2 + (low >= 0.8))]
            if len(band):
                share = band[:, right].mean()
                print(f"  evidence {low:.1f}-{low + 0.2:.1f}: {len(band)} queries, top right {share:.2f}")


if __name__ == "__main__":
    main()

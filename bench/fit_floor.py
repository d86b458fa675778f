"""Whether a fitted probability of "answerable" decides a query better than the relevance floor does.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \\
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \\
    python bench/fit_floor.py --braindump BD --manual MANUAL [--penalty 1.0] [--context]

BD and MANUAL are braindump and the bundled manual as notes, indexed with the
model (bench/blind_corpora.py). Only the fitting sets are read: the blind
manual set (bench/retrieval_blind/manual*.json) and bench/retrieval_dev.json
(its braindump and manual queries); the held-out corpora are not touched.

Per query, the signals the floor already judges by (floor.py: the top cosine,
the best coverage among the hits, whether search's rankings disagree on the
top note) and the floor's verdict. A logistic model of "in-corpus" on those
three signals is fitted by Newton's method with an L2 penalty, each set's
in-corpus and off-topic queries weighing alike, and both rules are compared:
in-corpus queries passed and off-topic ones refused, per set. With
`--context`, the same through the `context` operation at budget 2,000 (the
target included; nothing included for an off-topic question), the fitted
model standing in for floor.judge's query verdict.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Callable

import numpy as np
from bench_blind import queries
from blind_corpora import matcher

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index
from orgkit.ops import OpContext, call
from orgkit.retrieve import floor
from orgkit.retrieve.search import VectorCache, search

HERE = Path(__file__).resolve().parent
BUDGET = 2000


def fitting_sets(braindump: Path, manual: Path) -> dict[str, tuple[Path, list[dict]]]:
    """Each fitting set: its notes and its queries as {query, inside, answers(entry) -> bool}."""
    dev = json.loads((HERE / "retrieval_dev.json").read_text())["queries"]

    def from_dev(items: list[dict]) -> list[dict]:
        return [{"query": q["query"], "inside": q["kind"] != "off-topic",
                 "answers": (lambda ids: lambda entry: entry["id"] in ids)(set(q.get("relevant", [])))}
                for q in items]

    blind = [{"query": q["query"], "inside": bool(q["target"]),
              "answers": matcher("manual", manual, q) if q["target"] else (lambda entry: False)}
             for q in queries("manual")]
    return {"blind manual": (manual, blind),
            "dev braindump": (braindump, from_dev([q for q in dev if q.get("corpus") != "notes"])),
            "dev manual": (manual, from_dev([q for q in dev if q.get("corpus") == "notes"]))}


def signals(notes: Path, items: list[dict]) -> list[tuple[list[float], bool]]:
    """Per query: (top cosine, best coverage, disagree) and the floor's verdict."""
    index, cache = Index.at(notes), VectorCache()
    embedder = Embedder.from_config(load(notes))
    out = []
    for item in items:
        found = search(index, item["query"], embedder=embedder, cache=cache)
        s = found.signals or floor.Signals(None, 0.0)
        out.append(([s.cosine or 0.0, s.coverage, 0.0 if s.agree else 1.0], found.relevant))
    index.close()
    return out


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray, penalty: float) -> np.ndarray:
    """Logistic regression by Newton's method: (intercept, one weight per column), intercept not penalised."""
    a = np.c_[np.ones(len(x)), x]
    beta = np.zeros(a.shape[1])
    ridge = penalty * np.eye(len(beta))
    ridge[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-a @ beta))
        hessian = a.T @ (a * (weight * p * (1 - p))[:, None]) + ridge
        beta -= np.linalg.solve(hessian, a.T @ (weight * (p - y)) + ridge @ beta)
    return beta


def fitted_judge(beta: np.ndarray, judge: Callable) -> Callable:
    """floor.judge with the fitted model deciding a query under a model (hit floors unchanged)."""
    def decide(signals: floor.Signals, dense: floor.Floors | None = None, *, hit: bool = False) -> floor.Verdict:
        verdict = judge(signals, dense, hit=hit)
        if hit or dense is None or signals.cosine is None:
            return verdict
        z = beta[0] + beta[1] * signals.cosine + beta[2] * signals.coverage + beta[3] * (not signals.agree)
        return floor.Verdict(verdict.relevance, 1.0 / (1.0 + math.exp(-z)) >= 0.5)
    return decide


def context_line(notes: Path, items: list[dict]) -> tuple[int, int, int, int]:
    """(targets included, in-corpus queries, off-topic refused, off-topic queries) at the budget."""
    ctx = OpContext(notes, warm=True)
    included = refused = 0
    for item in items:
        out = call(ctx, "context", {"query": item["query"], "budget": BUDGET, "no_update": True}).result
        if item["inside"]:
            included += any(item["answers"](entry) for entry in out["included"])
        else:
            refused += not out["included"]
    ctx.close()
    inside = sum(item["inside"] for item in items)
    return included, inside, refused, len(items) - inside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--braindump", type=Path, required=True)
    parser.add_argument("--manual", type=Path, required=True)
    parser.add_argument("--penalty", type=float, default=1.0, help="the L2 penalty on the weights")
    parser.add_argument("--context", action="store_true", help="compare through `context` too")
    args = parser.parse_args()
    sets = fitting_sets(args.braindump, args.manual)
    rows = {name: signals(notes, items) for name, (notes, items) in sets.items()}
    x = np.array([features for name in sets for features, _ in rows[name]])
    y = np.array([item["inside"] for name in sets for item in sets[name][1]], dtype=float)
    group = np.array([f"{name}:{item['inside']}" for name in sets for item in sets[name][1]])
    weight = np.array([1.0 / np.sum(group == g) for g in group])
    beta = fit(x, y, weight * len(y) / weight.sum(), args.penalty)
    print("fitted: intercept {:.2f}, cosine {:.2f}, coverage {:.2f}, disputed {:.2f}".format(*beta))
    start = 0
    for name, (notes, items) in sets.items():
        part = slice(start, start + len(items))
        start += len(items)
        z = beta[0] + x[part] @ beta[1:]
        fitted = 1.0 / (1.0 + np.exp(-z)) >= 0.5
        floor_says = np.array([verdict for _, verdict in rows[name]])
        inside = y[part] == 1
        for rule, passed in (("floor", floor_says), ("fitted", fitted)):
            print(f"{name}, {rule}: in-corpus passed {int(passed[inside].sum())}/{int(inside.sum())}, "
                  f"off-topic refused {int((~passed[~inside]).sum())}/{int((~inside).sum())}")
    if args.context:
        judge = floor.judge
        for rule in ("floor", "fitted"):
            floor.judge = judge if rule == "floor" else fitted_judge(beta, judge)  # type: ignore[assignment]
            for name, (notes, items) in sets.items():
                print(f"{name}, {rule}, context at {BUDGET}: target included {{}}/{{}}, "
                      "off-topic refused {}/{}".format(*context_line(notes, items)))
        floor.judge = judge  # type: ignore[assignment]


if __name__ == "__main__":
    main()

"""Extraction that learns from a reviewer: verdicts on a few documents, then the others scored.

    python bench/bench_learn.py SET [--embed] [--repeats N] [--curve 0,1,2,3,5,8] [--l2 X]
                                    [--implicit X] [--min-score X] [--main N] [--tune]

SET is one of the blind annotations in bench/extract_blind (`decision`, `risks`, `paper`).
For each size n of the curve and each of --repeats random choices (seeds 0..N-1) of n
training documents, a reviewer's verdicts are derived from the annotation of those n
documents: every annotated fragment accepted (exact text of the source), every claim the
offline extractor proposes there that matches no fragment of its dimension (strict) rejected.
The scorer is fitted on them (`orgkit.extract.scorer`) and the documents not chosen are
extracted and scored strictly (bench_extract.score), every quote checked to be a span of its
source. With --main N the reviewer is a sparser one, who marks each dimension's first N points
only (bench_extract's main points; the verdicts and the scoring both use them). Reported: mean and standard deviation of strict P / R / F1 over the repeats, and the
same run without verdicts. With --tune, a grid of the constants (L2, IMPLICIT) at
5 training documents, the threshold the fit's own (the best F1 on its verdicts): meant for the one set the constants are fitted on.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_extract import CORPUS, MODEL, REPO, main_points, score, sources, strict  # noqa: E402

BLIND = REPO / "bench" / "extract_blind"
SETS = {"decision": ("adr_decision_review.json", str(BLIND / "decision_review_schema.org"), CORPUS),
        "risks": ("adr_requirements_risks.json", str(BLIND / "requirements_risks_schema.org"), CORPUS),
        "paper": ("paper_notes.json", "paper", CORPUS.parent / "braindump")}


def _fmt(name: str) -> str:
    return "org" if name.endswith(".org") else "markdown"


class Bench:
    """One blind set: its documents segmented once, the prior's picks once, and the annotation."""

    def __init__(self, which: str, embed=None, main: int | None = None) -> None:
        from orgkit.extract.offline import extract_offline
        from orgkit.extract.schema import resolve_schema
        from orgkit.extract.scorer import Likeness
        from orgkit.extract.units import segment

        gold_file, schema, self.corpus = SETS[which]
        self.gold = json.loads((BLIND / gold_file).read_text(encoding="utf-8"))
        if main:  # a sparser reviewer: each dimension's first `main` points only
            self.gold = main_points(self.gold, main)
        self.schema = resolve_schema(REPO, schema)
        self.names = sources(self.gold)
        self.texts = {n: (self.corpus / n).read_text(encoding="utf-8") for n in self.names}
        self.docs = {n: segment(self.texts[n], _fmt(n)) for n in self.names}
        self.embed = embed
        self.likeness = Likeness(embed)
        self.prior = {n: extract_offline(self.docs[n], self.schema, embed) for n in self.names}

    def verdicts(self, names: list[str]) -> list:
        """What a reviewer of the prior's claims on `names` says, as the annotation has it."""
        from orgkit.extract.anchor import find_quote
        from orgkit.extract.scorer import Verdict

        out = []
        for n in names:
            text = self.texts[n]
            spans: dict[str, list[tuple[int, int]]] = {}
            for dim, fragments in self.gold[n].items():
                for fragment in fragments:
                    span = find_quote(text, fragment)
                    assert span, fragment
                    spans.setdefault(dim, []).append(span)
                    out.append(Verdict(n, text, _fmt(n), dim, text[span[0]:span[1]], True))
            for pick in self.prior[n]:
                if not any(strict((pick.start, pick.end), s) for s in spans.get(pick.dimension, [])):
                    out.append(Verdict(n, text, _fmt(n), pick.dimension, pick.quote, False))
        return out

    def run(self, train: list[str], l2=None, implicit=None, min_score=None) -> dict:
        from orgkit.extract import scorer

        fit = scorer.fit_verdicts(self.schema, self.verdicts(train), self.embed, l2, implicit)
        test = [n for n in self.names if n not in train]
        predictions = {}
        for n in test:
            cands = scorer.candidates(self.docs[n], self.schema, fit, self.embed, self.likeness, self.prior[n])
            picks = scorer.choose(self.docs[n], self.schema, scorer.scored(cands, fit),
                                  fit.threshold if min_score is None else min_score, fit)
            assert all(self.texts[n][p.start:p.end] == p.quote for p in picks)  # every quote grounded
            predictions[n] = [(p.dimension, p.start, p.end) for p in picks]
        return score(predictions, {n: self.gold[n] for n in test}, True, self.corpus)["all"]

    def baseline(self, test: list[str]) -> dict:
        predictions = {n: [(p.dimension, p.start, p.end) for p in self.prior[n]] for n in test}
        return score(predictions, {n: self.gold[n] for n in test}, True, self.corpus)["all"]


def _mean(rows: list[dict], key: str) -> tuple[float, float]:
    values = [r[key] for r in rows]
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def curve(bench: Bench, sizes: list[int], repeats: int, **constants) -> None:
    print(f"{'docs':>4} {'P':>13} {'R':>13} {'F1':>13} {'F1 gain':>13} {'quotes':>7}")
    for n in sizes:
        rows, gains = [], []
        for seed in range(repeats):
            train = random.Random(seed).sample(bench.names, n)
            row = bench.run(train, **constants)
            base = bench.baseline([x for x in bench.names if x not in train])
            rows.append(row)
            gains.append({"f1": row["f1"] - base["f1"]})
        (p, ps), (r, rs), (f, fs), (g, gs) = (_mean(rows, "precision"), _mean(rows, "recall"),
                                              _mean(rows, "f1"), _mean(gains, "f1"))
        quotes = statistics.mean(r["predicted"] for r in rows)
        print(f"{n:>4} {p:.3f} ± {ps:.3f} {r:.3f} ± {rs:.3f} {f:.3f} ± {fs:.3f} {g:+.3f} ± {gs:.3f} {quotes:>7.1f}")
        sys.stdout.flush()


def tune(bench: Bench, repeats: int) -> None:
    print(f"{'l2':>6} {'implicit':>8} {'P':>6} {'R':>6} {'F1':>6}")
    for l2 in (0.3, 1.0, 3.0, 10.0):
        for implicit in (0.1, 0.25, 0.5, 1.0):
            rows = [bench.run(random.Random(seed).sample(bench.names, 5), l2, implicit) for seed in range(repeats)]
            print(f"{l2:>6} {implicit:>8} {_mean(rows, 'precision')[0]:.3f} "
                  f"{_mean(rows, 'recall')[0]:.3f} {_mean(rows, 'f1')[0]:.3f}")
            sys.stdout.flush()


def main() -> None:
    args = sys.argv[1:]
    if not args or args[0] not in SETS:
        raise SystemExit(__doc__)
    opts = {"repeats": 5, "curve": "0,1,2,3,5,8"}
    constants: dict[str, float] = {}
    it = iter(args[1:])
    embed = None
    tuning = False
    for arg in it:
        if arg == "--embed":
            from orgkit.embed import Embedder

            embed = Embedder("sentence-transformers/all-MiniLM-L6-v2", Path(os.environ.get("ORGKIT_MODEL_PATH", MODEL))).embed
        elif arg == "--tune":
            tuning = True
        elif arg == "--main":
            opts["main"] = next(it)
        elif arg in ("--repeats", "--curve"):
            opts[arg[2:]] = next(it)
        elif arg in ("--l2", "--implicit", "--min-score"):
            constants[arg[2:].replace("-", "_")] = float(next(it))
        else:
            raise SystemExit(__doc__)
    started = time.perf_counter()
    bench = Bench(args[0], embed, int(opts["main"]) if "main" in opts else None)
    print(f"{args[0]}: {len(bench.names)} documents, schema {bench.schema.name}, "
          f"{'embeddings' if embed else 'word stems'}; no verdicts on all: "
          f"{bench.baseline(bench.names)}")
    if tuning:
        tune(bench, int(opts["repeats"]))
    else:
        curve(bench, [int(x) for x in str(opts["curve"]).split(",")], int(opts["repeats"]), **constants)
    print(f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

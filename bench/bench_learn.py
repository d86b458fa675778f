"""Extraction that learns from a reviewer: verdicts on a few documents, then the others scored.

    python bench/bench_learn.py [SET ...] [--curve 0,1,3,5] [--rotations N] [--main N] [--embed]
                                [--l2 X] [--implicit X] [--cap X] [--min-score X] [--tune]

SET is one or more of `decision` and `blind` (the two sets of decision records, both fitting
sets; `blind` was reported once before it became one), `risks`, `paper` (reported, never fitted
on), `blind3` and `risks3` (a third set of fifteen records, annotated under both schemas by
someone who never saw the extractor's output: held out, reported and never fitted on); without one, decision, risks and paper. A reviewer's verdicts are derived from a set's annotation of the verdict
documents: every annotated fragment accepted (exact text of the source), every claim the offline
extractor proposes there that matches no fragment of its dimension (strict) rejected. The
scorer is fitted on them (`orgkit.extract.scorer`, as `orgkit extract learn` fits it) and the
other documents are extracted and scored strictly (bench_extract.score), every quote checked
to be a span of its source.

Folds. A set of 15 documents (decision, blind, blind3, risks3) is cut into three disjoint verdict sets of five
documents in the annotation's order (1-5, 6-10, 11-15), each scored on the other ten; with
--rotations 2 (the default) three more from the order `random.Random(1).shuffle` gives. A set
of 8 (risks, paper) takes its first five documents' verdicts and scores the last three. Each
point n of the curve fits on the first n documents of a fold's verdict set and scores the same
unseen documents (n = 0: no verdicts, today's rules). Reported per n: mean and standard
deviation over the folds of strict P / R / F1, the F1 gain over no verdicts, the quotes on the
unseen documents, and how many folds reach P >= .55 at R >= .60.

--main N makes the reviewer a sparser one, who marks each dimension's first N points only (the
verdicts and the scoring both). --tune prints a grid of the constants (CAP, IMPLICIT) at five
verdict documents: meant for the fitting set only.
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
DECISION_SCHEMA = str(BLIND / "decision_review_schema.org")
RISKS_SCHEMA = str(BLIND / "requirements_risks_schema.org")
SETS = {"decision": ("adr_decision_review.json", DECISION_SCHEMA, CORPUS),
        "risks": ("adr_requirements_risks.json", RISKS_SCHEMA, CORPUS),
        "paper": ("paper_notes.json", "paper", CORPUS.parent / "braindump"),
        "blind": ("adr2_decision_review.json", DECISION_SCHEMA, BLIND / "adr2"),
        "blind3": ("adr3_decision_review.json", DECISION_SCHEMA, BLIND / "adr3"),
        "risks3": ("adr3_requirements_risks.json", RISKS_SCHEMA, BLIND / "adr3")}
BAR = (0.55, 0.60)  # the goal: strict precision at this recall


def _fmt(name: str) -> str:
    return "org" if name.endswith(".org") else "markdown"


class Bench:
    """One annotated set: its documents segmented once, the prior's picks once, and the annotation."""

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

    def folds(self, rotations: int) -> list[tuple[list[str], list[str]]]:
        """(verdict documents, unseen documents): disjoint sets of five, or the first five of eight."""
        if len(self.names) < 15:
            return [(self.names[:5], self.names[5:])]
        out = []
        for rotation in range(rotations):
            order = list(self.names)
            if rotation:
                random.Random(rotation).shuffle(order)
            for k in range(0, 15, 5):
                train = order[k:k + 5]
                out.append((train, [n for n in self.names if n not in train]))
        return out

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

    def run(self, train: list[str], test: list[str], l2=None, implicit=None, min_score=None) -> dict:
        from orgkit.extract import scorer

        fit = scorer.fit_verdicts(self.schema, self.verdicts(train), self.embed, l2, implicit)
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


def _mean(values: list[float]) -> str:
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.3f} ± {spread:.3f}"


def curve(bench: Bench, sizes: list[int], rotations: int, **constants) -> list[dict]:
    """The learning curve as a markdown table, printed as each point is measured; the rows returned."""
    folds = bench.folds(rotations)
    print(f"{len(folds)} fold(s) of {len(folds[0][0])} verdict documents, {len(folds[0][1])} unseen each\n")
    print("| verdict documents | strict P | strict R | F1 | F1 gain | quotes on the unseen | folds at the bar |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for n in sizes:
        results = []
        for train, test in folds:
            base = bench.baseline(test)
            row = bench.run(train[:n], test, **constants) if n else base
            results.append(row | {"gain": row["f1"] - base["f1"]})
        at_bar = sum(r["precision"] >= BAR[0] and r["recall"] >= BAR[1] for r in results)
        print(f"| {n} | {_mean([r['precision'] for r in results])} | {_mean([r['recall'] for r in results])} | "
              f"{_mean([r['f1'] for r in results])} | {_mean([r['gain'] for r in results]) if n else '—'} | "
              f"{statistics.mean(r['predicted'] for r in results):.1f} | {at_bar}/{len(results)} |")
        sys.stdout.flush()
        rows.append({"n": n, "folds": results})
    if len(rows[-1]["folds"]) > 1:
        print("\nper fold at", sizes[-1], "documents (P / R):",
              ", ".join(f"{r['precision']:.3f} / {r['recall']:.3f}" for r in rows[-1]["folds"]))
    return rows


def tune(bench: Bench, rotations: int) -> None:
    """Strict P / R / F1 at five verdict documents for a grid of CAP and IMPLICIT (fitting set only)."""
    from orgkit.extract import scorer

    folds = bench.folds(rotations)
    print("| `CAP` | `IMPLICIT` | strict P | strict R | F1 | folds at the bar |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for cap in (0.0, 1.5, 2.0, 3.0):
        for implicit in (0.25, 0.5, 1.0):
            scorer.CAP = cap
            results = [bench.run(train, test, implicit=implicit) for train, test in folds]
            at_bar = sum(r["precision"] >= BAR[0] and r["recall"] >= BAR[1] for r in results)
            print(f"| {cap or 'none'} | {implicit} | {_mean([r['precision'] for r in results])} | "
                  f"{_mean([r['recall'] for r in results])} | {_mean([r['f1'] for r in results])} | "
                  f"{at_bar}/{len(results)} |")
            sys.stdout.flush()


def main() -> None:
    from orgkit.extract import scorer

    which: list[str] = []
    opts = {"curve": "0,1,3,5", "rotations": "2", "main": ""}
    constants: dict[str, float] = {}
    embed = None
    tuning = False
    it = iter(sys.argv[1:])
    for arg in it:
        if arg in SETS:
            which.append(arg)
        elif arg == "--embed":
            from orgkit.embed import Embedder

            model = Path(os.environ.get("ORGKIT_MODEL_PATH", MODEL))
            embed = Embedder("sentence-transformers/all-MiniLM-L6-v2", model).embed
        elif arg == "--tune":
            tuning = True
        elif arg in ("--curve", "--rotations", "--main"):
            opts[arg[2:]] = next(it)
        elif arg == "--cap":
            scorer.CAP = float(next(it))
        elif arg in ("--l2", "--implicit", "--min-score"):
            constants[arg[2:].replace("-", "_")] = float(next(it))
        else:
            raise SystemExit(__doc__)
    for name in which or ["decision", "risks", "paper"]:
        started = time.perf_counter()
        bench = Bench(name, embed, int(opts["main"]) if opts["main"] else None)
        print(f"\n{name}: {len(bench.names)} documents, schema {bench.schema.name}, "
              f"{'embeddings' if embed else 'word stems'}, CAP {scorer.CAP}\n")
        if tuning:
            tune(bench, int(opts["rotations"]))
        else:
            curve(bench, [int(x) for x in opts["curve"].split(",")], int(opts["rotations"]), **constants)
        print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

"""The offline extractor against hand annotations of ADRs: precision, recall, coverage, time.

    python bench/bench_extract.py [--gold FILE]... [--schema NAME|FILE] [--corpus DIR]
                                  [--embed] [--near-best R] [--main N] [--fit]

Each --gold FILE is an annotation ({source file: {dimension: [fragments]}}, the
source files named relative to the corpus) scored under --schema (default `adr`).
Without --gold: bench/extract_gold.json (eight ADRs, the development set the
extractor is fitted on) and bench/extract_heldout.json (three more, held out).
The corpus is ../shared/corpora/adr, or the directory $ORGKIT_ADR_CORPUS names, or
--corpus DIR (then only the annotated sources are extracted). `--fit` prints the
strict scores for each share of the best score kept per source and dimension
(`NEAR_BEST`); it is meant for the development annotation only. `--main N` also
scores a "main points" view: each annotated dimension of a source counts only its
first N fragments (a proxy for readers who mark fewer points, not such an annotation).

Two ways of matching a predicted quote with a gold fragment of the same dimension:
- lenient: their spans overlap by at least half of the shorter one (a whole
  sentence around a short fragment matches it; two quotes may match one fragment);
- strict: as lenient, and the overlap is also at least a third of the quote (a
  long quote that only touches the point does not count), and quotes and
  fragments pair one to one (a second quote of the same point is a miss).
Precision: matched predictions / predictions (annotated sources only); recall:
matched fragments / fragments; coverage: the (source, dimension) pairs with
gold fragments that got at least one quote.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("ORGKIT_BENCH_CODE", str(REPO)))  # another checkout's orgkit: "before"
CORPUS = Path(os.environ.get("ORGKIT_ADR_CORPUS", REPO.parent / "shared" / "corpora" / "adr"))
MODEL = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2-int8"
SETS = {"development": "extract_gold.json", "held-out": "extract_heldout.json"}

Span = tuple[int, int]


def _overlap(a: Span, b: Span) -> int:
    return min(a[1], b[1]) - max(a[0], b[0])


def lenient(pred: Span, gold: Span) -> bool:
    return _overlap(pred, gold) >= 0.5 * min(pred[1] - pred[0], gold[1] - gold[0])


def strict(pred: Span, gold: Span) -> bool:
    return lenient(pred, gold) and _overlap(pred, gold) * 3 >= pred[1] - pred[0]


def _pairs(preds: list[Span], spans: list[Span], strict_mode: bool) -> tuple[int, int]:
    """(matched predictions, matched fragments)."""
    if not strict_mode:
        return (sum(any(lenient(p, g) for g in spans) for p in preds),
                sum(any(lenient(p, g) for p in preds) for g in spans))
    used: set[int] = set()
    for p in preds:
        j = next((j for j, g in enumerate(spans) if j not in used and strict(p, g)), None)
        if j is not None:
            used.add(j)
    return len(used), len(used)


def sources(gold: dict) -> list[str]:
    """The annotated source files of an annotation (its other keys, `_about`, `schema`, are about it)."""
    return [k for k in gold if not k.startswith("_") and k != "schema"]


def score(predictions: dict[str, list[tuple[str, int, int]]], gold: dict, strict_mode: bool = False,
          corpus: Path | None = None) -> dict:
    """Micro precision/recall per dimension and overall, and coverage overall."""
    from orgkit.extract.anchor import find_quote

    rows: dict[str, list[int]] = {}  # dim -> [matched predictions, predictions, matched gold, gold]
    covered = wanted = 0
    for name in sources(gold):
        dims = gold[name]
        text = ((corpus or CORPUS) / name).read_text(encoding="utf-8")
        for dim, fragments in dims.items():
            spans = []
            for fragment in fragments:
                span = find_quote(text, fragment)
                assert span, f"{name}: gold fragment not found: {fragment!r}"
                spans.append(span)
            preds = [(s, e) for d, s, e in predictions.get(name, []) if d == dim]
            mp, mg = _pairs(preds, spans, strict_mode)
            row = rows.setdefault(dim, [0, 0, 0, 0])
            row[0] += mp
            row[1] += len(preds)
            row[2] += mg
            row[3] += len(spans)
            if spans:
                wanted += 1
                covered += bool(preds)
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    out = {}
    for dim, (mp, p, mg, g) in list(rows.items()) + [("all", total)]:
        prec, rec = (mp / p if p else 1.0), (mg / g if g else 1.0)
        out[dim] = {"precision": round(prec, 3), "recall": round(rec, 3),
                    "f1": round(2 * prec * rec / (prec + rec), 3) if prec + rec else 0.0,
                    "predicted": p, "gold": g}
    out["all"]["coverage"] = round(covered / wanted, 3) if wanted else 1.0
    return out


def main_points(gold: dict, n: int) -> dict:
    """`gold` with each source's dimensions cut to their first `n` fragments: a proxy for sparser
    readers, who mark a dimension's one or two main points (its first ones, in a source that
    leads with them)."""
    return {k: ({d: f[:n] for d, f in v.items()} if k in sources(gold) else v) for k, v in gold.items()}


def _args(argv: list[str]) -> dict:
    """--gold FILE (repeatable), --schema S, --corpus DIR, --embed, --near-best R, --main N, --fit."""
    out: dict = {"gold": [], "schema": "adr", "corpus": CORPUS, "embed": False, "near_best": None, "fit": False,
                 "main": None}
    it = iter(argv)
    for arg in it:
        if arg == "--gold":
            out["gold"].append(Path(next(it)))
        elif arg in ("--schema", "--corpus", "--near-best"):
            value = next(it)
            out[arg[2:].replace("-", "_")] = Path(value) if arg == "--corpus" else (
                float(value) if arg == "--near-best" else value)
        elif arg == "--main":
            out["main"] = int(next(it))
        elif arg in ("--embed", "--fit"):
            out[arg[2:]] = True
        else:
            raise SystemExit(__doc__)
    out["gold"] = out["gold"] or [REPO / "bench" / f for f in SETS.values()]
    return out


def extract_all(corpus: Path, names: list[str], schema, embed=None) -> tuple[dict, float]:
    """{source name: [(dimension, start, end)]} for the named sources, and the seconds it took."""
    from orgkit.extract.offline import extract_offline
    from orgkit.extract.units import segment

    started = time.perf_counter()
    predictions = {}
    for name in names:
        text = (corpus / name).read_text(encoding="utf-8")
        picks = extract_offline(segment(text, "org" if name.endswith(".org") else "markdown"), schema, embed)
        assert all(text[p.start:p.end] == p.quote for p in picks)  # every quote grounded
        predictions[name] = [(p.dimension, p.start, p.end) for p in picks]
    return predictions, time.perf_counter() - started


def _print(label: str, report: dict) -> None:
    print(f"\n{label} (coverage {report['all']['coverage']:.3f})")
    print(f"{'dimension':<14}{'precision':>10}{'recall':>8}{'f1':>7}{'pred':>6}{'gold':>6}")
    for dim, r in report.items():
        print(f"{dim:<14}{r['precision']:>10.3f}{r['recall']:>8.3f}{r['f1']:>7.3f}{r['predicted']:>6}{r['gold']:>6}")


def fit(corpus: Path, golds: list[dict], schema, main: int | None = None) -> None:
    """Strict scores on the given annotations for each share of the best score kept (`NEAR_BEST`),
    and on their main points with `main`: run on the development annotation only; the constant
    is chosen from this table."""
    from orgkit.extract import offline

    names = sorted({n for g in golds for n in sources(g)})
    print(f"{'near_best':>9}{'precision':>10}{'recall':>8}{'f1':>7}{'pred':>6}" + ("   main: P / R" if main else ""))
    for step in range(10, 101, 2):
        offline.NEAR_BEST = step / 100
        predictions, _ = extract_all(corpus, names, schema)
        r = score_all(corpus, predictions, golds, True)["all"]
        line = f"{step / 100:>9.2f}{r['precision']:>10.3f}{r['recall']:>8.3f}{r['f1']:>7.3f}{r['predicted']:>6}"
        if main:
            m = score_all(corpus, predictions, [main_points(g, main) for g in golds], True)["all"]
            line += f"   {m['precision']:.3f} / {m['recall']:.3f}"
        print(line)


def score_all(corpus: Path, predictions: dict, golds: list[dict], strict_mode: bool) -> dict:
    """`score` over several annotations of sources in `corpus` at once."""
    merged: dict = {}
    for gold in golds:
        merged.update({k: gold[k] for k in sources(gold)})
    return score(predictions, merged, strict_mode, corpus)


def main() -> None:
    from orgkit.extract import offline
    from orgkit.extract.schema import resolve_schema

    args = _args(sys.argv[1:])
    embed = None
    if args["embed"]:
        from orgkit.embed import Embedder

        embed = Embedder("sentence-transformers/all-MiniLM-L6-v2", MODEL).embed
    if args["near_best"] is not None:
        offline.NEAR_BEST = args["near_best"]
    schema = resolve_schema(REPO, args["schema"])
    golds = {path: json.loads(path.read_text(encoding="utf-8")) for path in args["gold"]}
    if args["fit"]:
        fit(args["corpus"], list(golds.values()), schema, args["main"])
        return
    corpus = args["corpus"]
    names = sorted(p.name for p in corpus.glob("[0-9]*.md")) if corpus == CORPUS else \
        sorted({n for g in golds.values() for n in sources(g)})
    predictions, elapsed = extract_all(corpus, names, schema, embed)
    for path, gold in golds.items():
        for mode in ("lenient", "strict"):
            _print(f"{path.name} ({schema.name}), {mode}", score_all(corpus, predictions, [gold], mode == "strict"))
        if args["main"]:
            _print(f"{path.name} ({schema.name}), strict, main points (first {args['main']} per dimension)",
                   score_all(corpus, predictions, [main_points(gold, args["main"])], True))
    print(f"\n{len(names)} sources extracted in {elapsed:.2f} s ({'embeddings' if embed else 'BM25'}), "
          f"{sum(len(p) for p in predictions.values())} quotes")


if __name__ == "__main__":
    main()

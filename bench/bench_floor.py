"""The relevance floor's verdicts on the fitting sets: in-corpus queries refused, off-topic ones answered.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \\
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \\
    python bench/bench_floor.py --braindump DIR --manual DIR [--enews DIR] [--npmdocs DIR] [--elpadocs DIR]
        [--litnotes DIR] [--agenda DIR] [--roamdaily DIR] [--constant NAMED=0.17 ...]
    python bench/bench_floor.py --braindump DIR --manual DIR ... --offtopic FILE

DIR: braindump, the manual, enews, npmdocs, elpadocs, litnotes, agenda and roamdaily as notes, indexed with the
model (`python bench/blind_corpora.py braindump DIR`, then `orgkit index
--notes DIR`). Only the fitting sets are read: braindump_fit and the blind
manual set with their typo and word-form variants, the question sets
braindump_fit2 and manual_fit2, bench/retrieval_dev.json (its queries on the
manual run on the manual) and, with --enews, --npmdocs, --elpadocs, --litnotes, --agenda and --roamdaily,
their sets (the
queries, their variants, the questions). Each query is judged by `search`'s
`relevant`, as `context` reads it. `--constant` sets one of floor.py's
constants for the run, so a value can be weighed before it is written down;
the last line scores a floor by the share of near questions it refuses less
ten times the share of in-corpus queries it refuses (a refused answer costs
more than a needless one: 2% of them are tolerated against 20%). With
`--offtopic`, only the lines of FILE are asked of each corpus, and those
answered are listed.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from bench_blind import lines_of

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index
from orgkit.retrieve import floor
from orgkit.retrieve.search import VectorCache, search

HERE = Path(__file__).resolve().parent
SETS = {"braindump": ("retrieval_blind/braindump_fit.json", "retrieval_blind/braindump_fit_typos.json",
                      "retrieval_blind/braindump_fit2.json"),
        "manual": ("retrieval_blind/manual.json", "retrieval_blind/manual_typos.json",
                   "retrieval_blind/manual_fit2.json"),
        "enews": ("retrieval_blind/enews.json", "retrieval_blind/enews_typos.json", "retrieval_blind/enews_fit2.json"),
        "npmdocs": ("retrieval_blind/npmdocs.json", "retrieval_blind/npmdocs_typos.json",
                    "retrieval_blind/npmdocs_fit2.json"),
        "elpadocs": ("retrieval_blind/elpadocs.json", "retrieval_blind/elpadocs_typos.json",
                     "retrieval_blind/elpadocs_fit2.json"),
        "litnotes": ("retrieval_blind/litnotes.json", "retrieval_blind/litnotes_typos.json",
                     "retrieval_blind/litnotes_fit2.json"),
        "agenda": ("retrieval_blind/agenda.json", "retrieval_blind/agenda_typos.json",
                   "retrieval_blind/agenda_fit2.json"),
        "roamdaily": ("retrieval_blind/roamdaily.json", "retrieval_blind/roamdaily_typos.json",
                      "retrieval_blind/roamdaily_fit2.json")}
MISSED_ANSWER_COST = 10  # an in-corpus query refused weighs as ten near questions answered


def fitting_queries(corpus: str) -> list[dict]:
    """The fitting queries over `corpus`, each with its group: in (answered), near or everyday (refused)."""
    out = [q for name in SETS[corpus] for q in json.loads((HERE / name).read_text())["queries"]]
    if corpus in ("braindump", "manual"):
        dev = json.loads((HERE / "retrieval_dev.json").read_text())["queries"]
        out += [q for q in dev if (q.get("corpus") == "notes") == (corpus == "manual")]
    return [q | {"group": group(q)} for q in out]


def group(query: dict) -> str:
    """in: a note answers it; near: off-topic near the notes' field; everyday: off-topic everyday life."""
    if query.get("target") or query.get("relevant"):
        return "in"
    return query.get("offtopic_kind") or ("everyday" if query["kind"] == "off-topic" else "near")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--braindump", type=Path, required=True)
    parser.add_argument("--manual", type=Path, required=True)
    parser.add_argument("--enews", type=Path, help="enews as notes: its two fitting sets too")
    parser.add_argument("--npmdocs", type=Path, help="npmdocs as notes: its two fitting sets too")
    parser.add_argument("--elpadocs", type=Path, help="elpadocs as notes: its two fitting sets too")
    parser.add_argument("--litnotes", type=Path, help="litnotes as notes: its two fitting sets too")
    parser.add_argument("--agenda", type=Path, help="agenda as notes: its two fitting sets too")
    parser.add_argument("--roamdaily", type=Path, help="roamdaily as notes: its two fitting sets too")
    parser.add_argument("--constant", action="append", default=[], metavar="NAME=VALUE",
                        help="set a constant of orgkit/retrieve/floor.py for this run")
    parser.add_argument("--offtopic", type=Path, help="only count how many of these off-topic lines (one a line) "
                        "each corpus refuses: retrieval_blind/everyday_questions.txt")
    args = parser.parse_args()
    for assignment in args.constant:
        name, _, value = assignment.partition("=")
        if not isinstance(getattr(floor, name, None), (int, float)):
            raise SystemExit(f"floor.py has no numeric constant {name!r} (--constant NAME=VALUE)")
        try:
            setattr(floor, name, type(getattr(floor, name))(value))
        except ValueError:
            raise SystemExit(f"--constant {assignment!r}: {value!r} is not a number") from None
    total, refused = Counter(), Counter()
    corpora = [(name, notes) for name, notes in (("braindump", args.braindump), ("manual", args.manual),
                                                 ("enews", args.enews), ("npmdocs", args.npmdocs),
                                                 ("elpadocs", args.elpadocs), ("litnotes", args.litnotes),
                                                 ("agenda", args.agenda), ("roamdaily", args.roamdaily))
               if notes]
    if args.offtopic:
        return offtopic_lines(corpora, args.offtopic)
    for corpus, notes in corpora:
        index, cache, embedder = Index.at(notes), VectorCache(), Embedder.from_config(load(notes))
        for query in fitting_queries(corpus):
            total[query["group"]] += 1
            refused[query["group"]] += not search(index, query["query"], embedder=embedder, cache=cache).relevant
        index.close()
    for name in ("in", "near", "everyday"):
        print(f"{name}: {refused[name]}/{total[name]} refused")
    score = refused["near"] / total["near"] - MISSED_ANSWER_COST * refused["in"] / total["in"]
    print(f"near share refused - {MISSED_ANSWER_COST} x in-corpus share refused: {score:.3f}")


def offtopic_lines(corpora: list[tuple[str, Path]], path: Path) -> None:
    """How many of the off-topic lines of `path` each corpus refuses, and what answered the others."""
    lines = lines_of(path)
    for corpus, notes in corpora:
        index, cache, embedder = Index.at(notes), VectorCache(), Embedder.from_config(load(notes))
        answered = [(line, found.hits[0].title) for line in lines
                    if (found := search(index, line, embedder=embedder, cache=cache)).relevant]
        index.close()
        print(f"{corpus}: refused {len(lines) - len(answered)}/{len(lines)}"
              + "".join(f"\n  {line!r} -> {title}" for line, title in answered))


if __name__ == "__main__":
    main()

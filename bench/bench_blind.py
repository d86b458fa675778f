"""Search and context on queries written blind (bench/retrieval_blind/), per corpus, method and kind.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \\
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \\
    python bench/bench_blind.py CORPUS --notes DIR [--budget 2000] [--no-context] [--no-ids]

DIR is CORPUS as notes (`python bench/blind_corpora.py CORPUS DIR`), indexed
with the model (`orgkit index --notes DIR`; braindump_fit runs over braindump).
The queries were written by a reader who never ran orgkit
(bench/retrieval_blind/README.md); the misspelled and word-form variants of
the keyword queries were made by a program; each corpus also has everyday
off-topic questions. Only `manual` and `braindump_fit` (with
bench/retrieval_dev.json), the question sets `braindump_fit2` and
`manual_fit2`, `braindump_sections` (targets are sections of a note:
judged by file and line, as literate's), `enews` with `enews_fit2` (release
notes without IDs: sections as targets, near and everyday questions) and
`npmdocs` with `npmdocs_fit2` (npm's manual, seventeen pages, as small as adr)
and `elpadocs` with `elpadocs_fit2` (the org documentation of Debian's Emacs
packages: sections as targets, prose beside configuration snippets) and
`litnotes` with `litnotes_fit2` (literate programs and configurations, mostly
code, without IDs) and `agenda` with `agenda_fit2` (one person's org folder of
work and home: TODO trees, meetings, a journal; many short headings, no IDs) and `roamdaily` with
`roamdaily_fit2` (an org-roam folder of daily and permanent notes with IDs: TODO items and decisions as
headings with nothing under them, sections as targets) are for fitting constants; braindump, adr and
literate, with their everyday questions, are held out (run to report, never
to choose), and so are the near and absent-word files of every corpus
(`*_near.json`, `*_absent_*.json`) and the later sets on the same three
corpora (`braindump_fresh`, `adr_fresh`, `literate_fresh`), and `roamdaily2` with `roamdaily2_fresh` (another
person's org-roam folder of the same shape as roamdaily); the near and everyday questions inside the
fitting question sets are fitting data (bench_floor.py reads them).

Search: MRR@10 and recall@10 per kind for dense, lexical (BM25), plain
reciprocal-rank fusion of the two (k=60) and orgkit's hybrid. Context (the
`context` operation on one warm context, as `serve` runs it): the share of
in-corpus queries whose target is included at the budget, and of off-topic
ones answered with nothing ("nothing relevant"), by kind: near the notes'
subjects, everyday, or built on ordinary words the corpus never uses (absent); and how many of
those absent words search rewrote into a word of the notes.

With `--no-ids`, DIR is the corpus built without IDs (`blind_corpora.py ...
--no-ids`), and hits are judged by file and line (blind_corpora.matcher).

Only `search` and the `context` operation are called, so the same script
measures an older orgkit (its checkout first on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from blind_corpora import matcher

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index
from orgkit.ops import OpContext, call
from orgkit.roles import OWNER
from orgkit.retrieve.search import VectorCache, lexical_terms, search

HERE = Path(__file__).resolve().parent
K = 10
POOL = 50
KINDS = ("paraphrase", "keyword", "keyword_typo", "keyword_form", "question")


def queries(corpus: str) -> list[dict]:
    """The set's queries, its typo and word-form variants, and the corpus's everyday off-topic questions."""
    out = []
    for name in (f"{corpus}.json", f"{corpus}_typos.json", f"{corpus}_everyday.json", f"{corpus}_near.json",
                 f"{corpus}_absent_queries.json"):
        if (HERE / "retrieval_blind" / name).exists():
            out += json.loads((HERE / "retrieval_blind" / name).read_text())["queries"]
    return out


def notes_corpus(query_set: str) -> str:
    """The corpus a query set is over (braindump_fit, braindump_fit2, braindump_sections and
    braindump_fresh are more sets over braindump)."""
    return query_set.split("_fit")[0].split("_sections")[0].split("_fresh")[0]


def rrf(*rankings: list[dict], k: float = 60.0) -> list[dict]:
    score: dict[str, float] = {}
    first: dict[str, dict] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, 1):
            score[hit["id"]] = score.get(hit["id"], 0.0) + 1.0 / (k + rank)
            first.setdefault(hit["id"], hit)
    return [first[i] for i in sorted(score, key=lambda i: -score[i])]


def search_table(corpus: str, notes: Path, items: list[dict], ids: bool = True) -> None:
    index, cache = Index.at(notes), VectorCache()
    embedder = Embedder.from_config(load(notes))

    def hits(query: str, mode: str, limit: int) -> list[dict]:
        found = search(index, query, mode=mode, limit=limit, embedder=embedder, cache=cache)
        return [{"id": h.id, "file": h.file, "line": h.line} for h in found.hits]

    methods = {"dense": lambda q: hits(q, "dense", K), "lexical": lambda q: hits(q, "lexical", K),
               "rrf (k=60)": lambda q: rrf(hits(q, "dense", POOL), hits(q, "lexical", POOL)),
               "orgkit hybrid": lambda q: hits(q, "hybrid", K)}
    inside = [q for q in items if q["target"]]
    print(f"\n{corpus}: search, {len(inside)} in-corpus queries, MRR@10 (R@10)\n"
          "| method | all | " + " | ".join(KINDS) + " |\n" + "|---" * (len(KINDS) + 2) + "|")
    for name, ranked in methods.items():
        reciprocal: dict[str, list[float]] = {k: [] for k in KINDS}
        recall: dict[str, list[float]] = {k: [] for k in KINDS}
        for item in inside:
            answers = matcher(notes_corpus(corpus), notes, item, ids)
            top = ranked(item["query"])[:K]
            rank = next((i for i, hit in enumerate(top, 1) if answers(hit)), None)
            reciprocal[item["kind"]].append(1 / rank if rank else 0.0)
            recall[item["kind"]].append(1.0 if rank else 0.0)
        every = [x for v in reciprocal.values() for x in v]
        every_r = [x for v in recall.values() for x in v]
        cells = [f"{_mean(reciprocal[k]):.3f} ({_mean(recall[k]):.2f})" for k in KINDS]
        print(f"| {name} | {_mean(every):.3f} ({_mean(every_r):.2f}) | " + " | ".join(cells) + " |")
    index.close()


def context_table(corpus: str, notes: Path, items: list[dict], budget: int, ids: bool = True) -> None:
    ctx = OpContext(notes, warm=True)
    call(ctx, "context", {"query": "warm up", "budget": budget}, identity=OWNER)
    included: dict[str, list[bool]] = {}
    refused: dict[str, list[bool]] = {}
    empty = 0  # in-corpus queries answered with nothing
    for item in items:
        out = call(ctx, "context", {"query": item["query"], "budget": budget, "no_update": True},
                   identity=OWNER).result
        if not item["target"]:
            refused.setdefault(item.get("offtopic_kind", "near"), []).append(not out["included"])
            continue
        answers = matcher(notes_corpus(corpus), notes, item, ids)
        empty += not out["included"]
        included.setdefault(item["kind"], []).append(any(answers(entry) for entry in out["included"]))
    every = [x for v in included.values() for x in v]
    print(f"\n{corpus}: context at budget {budget}: target included {sum(every)}/{len(every)} "
          f"({_mean(every):.0%}), answered with nothing {empty}; off-topic answered with nothing: "
          + ", ".join(f"{kind} {sum(v)}/{len(v)}" for kind, v in sorted(refused.items())))
    print("  " + ", ".join(f"{k} {sum(included.get(k, []))}/{len(included.get(k, []))}" for k in KINDS))
    ctx.close()


def absent_words_line(corpus: str, notes: Path, listed: Path | None = None) -> None:
    """How many of the corpus's ordinary absent words (or those of `listed`, one a line) search
    rewrote into a word of the notes (each searched alone by its words, and capitalised as a
    sentence would start with it): said to be corrected, or matched at all, as a word taken
    silently for another spelling would be."""
    path = HERE / "retrieval_blind" / f"{notes_corpus(corpus)}_absent_words.json"
    if listed is not None:
        words = lines_of(listed)
    elif path.exists():
        words = [w["word"] for w in json.loads(path.read_text())["words"]]
    else:
        return
    index = Index.at(notes)
    with index.snapshot() as conn:  # a word the notes have come to hold since the list was written is no test
        held = {w for w in words if any(t.docs for t in lexical_terms(conn, w, index.backend, index.memo, exact=True))}
    words = [w for w in words if w not in held]
    rewritten = [w for w in words for typed in (w, w.capitalize())
                 if (found := search(index, typed, mode="lexical")).corrected or found.hits]
    index.close()
    print(f"\n{corpus}: absent words rewritten {len(rewritten)}/{2 * len(words)}"
          + (f": {', '.join(sorted(set(rewritten)))}" if rewritten else "")
          + (f" (left out, the notes hold them: {', '.join(sorted(held))})" if held else ""))


def lines_of(path: Path) -> list[str]:
    """The lines of a blind list (one word or query a line), blank ones left out."""
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def _mean(xs: list) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", choices=("braindump", "braindump_fit", "braindump_fit2", "braindump_sections", "adr",
                                           "manual", "manual_fit2", "literate", "enews", "enews_fit2", "npmdocs",
                                           "npmdocs_fit2", "elpadocs", "elpadocs_fit2", "litnotes", "litnotes_fit2",
                                           "agenda", "agenda_fit2",
                                           "braindump_fresh", "adr_fresh", "literate_fresh", "roamdaily",
                                           "roamdaily_fit2", "roamdaily2", "roamdaily2_fresh"))
    parser.add_argument("--notes", type=Path, required=True, help="the corpus as notes, indexed")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--no-context", action="store_true")
    parser.add_argument("--no-ids", action="store_true", help="DIR was built without IDs: judge by file and line")
    parser.add_argument("--words", type=Path, help="only count how many of these words (one a line, the notes "
                        "lacking them) are rewritten: retrieval_blind/everyday_words.txt")
    args = parser.parse_args()
    if args.words:
        return absent_words_line(args.corpus, args.notes, args.words)
    items = queries(args.corpus)
    search_table(args.corpus, args.notes, items, not args.no_ids)
    absent_words_line(args.corpus, args.notes)
    if not args.no_context:
        context_table(args.corpus, args.notes, items, args.budget, not args.no_ids)


if __name__ == "__main__":
    main()

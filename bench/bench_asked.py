"""Questions written blind as people type them, names capitalised or not: answered or refused.

    ORGKIT_MODEL=sentence-transformers/all-MiniLM-L6-v2 \\
    ORGKIT_MODEL_PATH=../shared/models/all-MiniLM-L6-v2-int8 \\
    python bench/bench_asked.py CORPUS --notes DIR

CORPUS: literate or adr (held out: report only); DIR: the corpus as notes, indexed with the
model (`python bench/blind_corpora.py CORPUS DIR [--no-ids]`, then `orgkit index --notes DIR`).
The set, `retrieval_blind/CORPUS_asked.json`: 25 questions a note answers ("in", with the file
that answers it) and 25 on the corpus's field that no note answers ("near", their key terms
checked absent with grep). Each is judged by `search`'s `relevant`, as `context` reads it: the
in-corpus questions refused, the near ones refused, and the in-corpus ones whose file is among
the first ten hits; the questions judged wrongly are listed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from orgkit.config import load
from orgkit.embed import Embedder
from orgkit.index import Index
from orgkit.retrieve.search import VectorCache, search

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", choices=("literate", "adr"))
    parser.add_argument("--notes", type=Path, required=True)
    args = parser.parse_args()
    asked = json.loads((HERE / "retrieval_blind" / f"{args.corpus}_asked.json").read_text())["questions"]
    index, cache, embedder = Index.at(args.notes), VectorCache(), Embedder.from_config(load(args.notes))
    refused = {"in": 0, "near": 0}
    found, wrong = 0, []
    for question in asked:
        result = search(index, question["query"], embedder=embedder, cache=cache)
        if question["kind"] == "in":  # adr's markdown records are notes under the same name (blind_corpora.py)
            wanted = question["file"] if args.corpus == "literate" else Path(question["file"]).stem + ".org"
            found += any(hit.file == wanted for hit in result.hits)
        refused[question["kind"]] += not result.relevant
        if result.relevant != (question["kind"] == "in"):
            wrong.append(f"  {question['kind']}: {question['query']} -> {result.hits[0].title if result.hits else ''}")
    index.close()
    total = {kind: sum(q["kind"] == kind for q in asked) for kind in refused}
    print(f"{args.corpus}: in-corpus refused {refused['in']}/{total['in']}, found in the first ten "
          f"{found}/{total['in']}; near refused {refused['near']}/{total['near']}")
    print("\n".join(wrong))


if __name__ == "__main__":
    main()

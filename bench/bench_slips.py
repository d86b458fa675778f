"""Program-made slips of words the notes use: the share that search reads back as the word meant.

    python bench/bench_slips.py --notes DIR [--seed 7] [--count 300] [--first-letter] [--show]
    python bench/bench_slips.py --notes DIR --pairs FILE --corpus NAME [--show]
    python bench/bench_slips.py --notes DIR --held [--show]

DIR: a notes folder, indexed (`orgkit index --notes DIR`). Words of five or
more letters are drawn from its .org files, each given one slip (a letter
dropped, added, changed, or two neighbours swapped, at a position drawn at
random); a slip that is itself a word of the language or of the notes is
left out (no reading of one word can tell it from the word meant). Without
`--first-letter` the first letter is never touched, as people rarely miss it.
A slip counts as read back when the query search shows (its correction, or
the slip as search reads it: as typed, or spelt the notes' way across the
Atlantic) stems as the word meant does.

With `--pairs`, the slips are not made by the program but read from FILE,
tab-separated lines of corpus, word, slip (and what kind of slip it is),
those of corpus NAME: retrieval_blind/human_misspellings.tsv holds
misspellings written by hand, as people make them. A slip that is a word of
the language or of the notes is left out, as above.

With `--held`, the other side: the words the notes write (four letters or
more) that no list of the language knows and the index holds (their text,
not their IDs or link targets), their jargon and names ("kubectl",
"goroutines"), each searched alone: how many search shows corrected into
another word. A word the notes write is no slip, so the figure should be 0.
"""

from __future__ import annotations

import argparse
import random
import re
import string
from pathlib import Path

from orgkit.index import Index
from orgkit.index.lexicon import Lexicon
from orgkit.index.vocab import stem
from orgkit.retrieve.search import lexical_terms, search


def slipped(word: str, rng: random.Random, first_letter: bool) -> str:
    """`word` with one slip at a random position (the first letter kept unless `first_letter`)."""
    at = rng.randrange(0 if first_letter else 1, len(word))
    kind = rng.choice("drop add change swap".split())
    if kind == "drop":
        return word[:at] + word[at + 1:]
    if kind == "add":
        return word[:at] + rng.choice(string.ascii_lowercase) + word[at:]
    if kind == "change":
        return word[:at] + rng.choice(string.ascii_lowercase.replace(word[at], "")) + word[at + 1:]
    at = min(at, len(word) - 2)
    return word[:at] + word[at + 1] + word[at] + word[at + 2:]


def read_as(index: Index, slip: str) -> str:
    """`slip` as search reads it when it shows no correction: as typed, or as the notes spell it across
    the Atlantic ("dence" is their "dense", no slip to show)."""
    with index.snapshot() as conn:
        return " ".join(term.word for term in lexical_terms(conn, slip, index.backend, index.memo)) or slip


def held_rewritten(index: Index, lexicon: Lexicon, text: str, show: bool) -> None:
    """Print how many of the words `text` writes that no list knows search shows corrected."""
    own = sorted({w.lower() for w in re.findall(r"\b[a-zA-Z]{4,}\b", text)})
    with index.snapshot() as conn:
        unknown = [w for w in own if not lexicon.is_real(w)
                   and all(t.docs for t in lexical_terms(conn, w, index.backend, index.memo, exact=True))]
    rewritten = [(w, fixed) for w in unknown if (fixed := search(index, w, mode="lexical", limit=1).corrected)]
    print(f"{index.root.name}: the notes' own words no list knows rewritten {len(rewritten)}/{len(unknown)}")
    if show:
        print("\n".join(f"  {w} -> {fixed}" for w, fixed in rewritten))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--first-letter", action="store_true", help="slips may fall on the first letter")
    parser.add_argument("--show", action="store_true", help="list the slips not read back")
    parser.add_argument("--pairs", type=Path, help="slips written by hand: corpus, word, slip a line (tab-separated)")
    parser.add_argument("--corpus", help="with --pairs: the corpus whose lines to read")
    parser.add_argument("--held", action="store_true", help="the notes' own words no list knows: how many are rewritten")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    text = " ".join(p.read_text(errors="ignore") for p in sorted(args.notes.rglob("*.org")))
    words = sorted({w.lower() for w in re.findall(r"\b[a-zA-Z]{5,}\b", text)})
    lexicon, index = Lexicon(), Index.at(args.notes)
    if args.held:
        held_rewritten(index, lexicon, text, args.show)
        return
    if args.pairs:
        pairs = [(word, slip) for corpus, word, slip, *_ in (line.split("\t") for line in
                 args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()) if corpus == args.corpus]
    else:
        drawn = rng.sample(words, min(args.count, len(words)))
        pairs = [(word, slipped(word, rng, args.first_letter)) for word in drawn]
    read_back, missed, left_out = 0, [], 0
    for word, slip in pairs:
        if slip in words or lexicon.is_real(slip):
            left_out += 1
            continue
        shown = search(index, slip, mode="lexical", limit=1).corrected or read_as(index, slip)
        if stem([shown]) == stem([word]):
            read_back += 1
        else:
            missed.append(f"  {slip} -> {shown} (meant {word})")
    total = read_back + len(missed)
    how = f"{args.pairs.name} ({args.corpus})" if args.pairs else \
        f"seed {args.seed}{', first letters too' if args.first_letter else ''}"
    print(f"{args.notes.name}, {how}: "
          f"{read_back}/{total} slips read back ({read_back / max(total, 1):.3f}); {left_out} were words")
    if args.show:
        print("\n".join(missed))


if __name__ == "__main__":
    main()

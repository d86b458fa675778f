"""Program-made slips of words the notes use: the share that search reads back as the word meant.

    python bench/bench_slips.py --notes DIR [--seed 7] [--count 300] [--first-letter] [--show]

DIR: a notes folder, indexed (`orgkit index --notes DIR`). Words of five or
more letters are drawn from its .org files, each given one slip (a letter
dropped, added, changed, or two neighbours swapped, at a position drawn at
random); a slip that is itself a word of the language or of the notes is
left out (no reading of one word can tell it from the word meant). Without
`--first-letter` the first letter is never touched, as people rarely miss it.
A slip counts as read back when the query search shows (its correction, or
the slip itself) stems as the word meant does.
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
from orgkit.retrieve.search import search


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--first-letter", action="store_true", help="slips may fall on the first letter")
    parser.add_argument("--show", action="store_true", help="list the slips not read back")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    text = " ".join(p.read_text(errors="ignore") for p in sorted(args.notes.rglob("*.org")))
    words = sorted({w.lower() for w in re.findall(r"\b[a-zA-Z]{5,}\b", text)})
    lexicon, index = Lexicon(), Index.at(args.notes)
    read_back, missed, left_out = 0, [], 0
    for word in rng.sample(words, min(args.count, len(words))):
        slip = slipped(word, rng, args.first_letter)
        if slip in words or lexicon.is_real(slip):
            left_out += 1
            continue
        shown = search(index, slip, mode="lexical", limit=1).corrected or slip
        if stem([shown]) == stem([word]):
            read_back += 1
        else:
            missed.append(f"  {slip} -> {shown} (meant {word})")
    total = read_back + len(missed)
    print(f"{args.notes.name}, seed {args.seed}{', first letters too' if args.first_letter else ''}: "
          f"{read_back}/{total} slips read back ({read_back / max(total, 1):.3f}); {left_out} were words")
    if args.show:
        print("\n".join(missed))


if __name__ == "__main__":
    main()

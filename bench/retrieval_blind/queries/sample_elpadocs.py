"""The elpadocs sections the blind queries are written on: `python sample_elpadocs.py DIR`, DIR the corpus as
`python bench/blind_corpora.py elpadocs DIR DEBS` builds it. Every heading whose own section (to the next heading)
holds 25 words or more of prose (`#+` lines and src/example blocks not counted); elpadocs.json: seed 2032,
45 sections; elpadocs_fit2.json's questions: seed 2033, 25 others."""
import json
import re
import sys
from pathlib import Path

from sample_enews import sections, two_samples

BLOCK = re.compile(r"^\s*#\+begin_", re.I)
END = re.compile(r"^\s*#\+end_", re.I)


def prose_words(lines: list[str]) -> int:
    """The words of a section's lines outside blocks, `#+` lines not counted."""
    words, inside = 0, False
    for line in lines:
        if BLOCK.match(line):
            inside = True
        elif END.match(line):
            inside = False
        elif not inside and line.strip() and not line.lstrip().startswith("#+"):
            words += len(line.split())
    return words


def print_samples(root: Path, first: tuple[str, int, int], second: tuple[str, int, int]) -> None:
    """Two (set name, seed, size) samples of the sections of `root` holding enough prose, as JSON;
    how many there were to sample from on stderr."""
    items = sections(root, sorted(root.rglob("*.org")), prose_words)
    one, two = two_samples(items, first[1:], second[1:])
    print(len(items), file=sys.stderr)
    print(json.dumps({first[0]: one, second[0]: two}, indent=1))


if __name__ == "__main__":
    print_samples(Path(sys.argv[1]), ("elpadocs", 2032, 45), ("elpadocs_fit2", 2033, 25))

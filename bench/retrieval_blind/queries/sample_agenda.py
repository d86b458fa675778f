"""The agenda sections the blind queries are written on: `python sample_agenda.py DIR`, DIR the corpus as
`python bench/blind_corpora.py agenda DIR` builds it. Every heading whose own section (to the next heading)
holds 25 words or more of prose: `#+` lines, src/example blocks, drawers (properties, logbook) and planning
lines (SCHEDULED, DEADLINE, CLOSED, CLOCK) not counted, as an agenda entry's bookkeeping is no text to ask
about; agenda.json: seed 2036, 45 sections; agenda_fit2.json's questions: seed 2037, 25 others."""
import json
import re
import sys
from pathlib import Path

from sample_elpadocs import BLOCK, END
from sample_enews import sections, two_samples

DRAWER = re.compile(r"^\s*:[A-Za-z_-]+:\s*$")
DRAWER_END = re.compile(r"^\s*:END:\s*$", re.I)
PLANNING = re.compile(r"^\s*(SCHEDULED|DEADLINE|CLOSED|CLOCK):")


def prose_words(lines: list[str]) -> int:
    """The words of a section's lines outside blocks and drawers, `#+` and planning lines not counted."""
    words, block, drawer = 0, False, False
    for line in lines:
        if BLOCK.match(line):
            block = True
        elif END.match(line):
            block = False
        elif not block and DRAWER_END.match(line):
            drawer = False
        elif not block and DRAWER.match(line):
            drawer = True
        elif not (block or drawer or PLANNING.match(line)) and line.strip() and not line.lstrip().startswith("#+"):
            words += len(line.split())
    return words


if __name__ == "__main__":
    root = Path(sys.argv[1])
    items = sections(root, sorted(root.rglob("*.org")), prose_words)
    one, two = two_samples(items, (2036, 45), (2037, 25))
    print(len(items), file=sys.stderr)
    print(json.dumps({"agenda": one, "agenda_fit2": two}, indent=1))

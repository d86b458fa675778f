"""The sections the blind queries of an org-roam folder of dailies are written on:
`python sample_roamdaily.py DIR [roamdaily|roamdaily2]`, DIR the corpus (bench/retrieval_blind/roamdaily or
roamdaily2). Two kinds of target, as such a folder holds both: sections whose own text holds 25 words or
more of prose (as `sample_agenda.py` counts them), and headings with no text and no heading under them (a
TODO item, a decision written as a heading), whose words are all they say.
roamdaily (fitting): roamdaily.json 30 sections (seed 2038) and 15 bare headings (seed 2039), roamdaily_fit2.json's
questions 15 other sections (seed 2040) and 10 other bare headings (seed 2041). roamdaily2 (held out): the same
counts for roamdaily2.json and roamdaily2_fresh.json, seeds 2042 to 2045."""
import json
import sys
from pathlib import Path

from sample_agenda import prose_words
from sample_enews import sections, two_samples

SETS = {"roamdaily": (("roamdaily", "roamdaily_fit2"), 2038), "roamdaily2": (("roamdaily2", "roamdaily2_fresh"), 2042)}


if __name__ == "__main__":
    root = Path(sys.argv[1])
    (first, second), seed = SETS[sys.argv[2] if len(sys.argv) > 2 else "roamdaily"]
    files = sorted(root.rglob("*.org"))
    prose, bare = sections(root, files, prose_words), sections(root, files, prose_words, bare=True)
    one, two = two_samples(prose, (seed, 30), (seed + 2, 15))
    bare_one, bare_two = two_samples(bare, (seed + 1, 15), (seed + 3, 10))
    print(len(prose), len(bare), file=sys.stderr)
    print(json.dumps({first: {"sections": one, "bare": bare_one}, second: {"sections": two, "bare": bare_two}},
                     indent=1))

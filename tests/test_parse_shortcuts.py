"""The parser's and indexer's shortcuts give what the long way gives.

Each shortcut skips work that cannot change the answer (a pattern that cannot
match, a second reading of the headings, `json.dumps`' setup): these tests
compare it with the long way on real notes and on random input.
"""

from __future__ import annotations

import gc
import json
import random
import re

import pytest

from orgkit.index.chunks import chunk_file
from orgkit.index.update import _json_object, _json_strings
from orgkit.org import parse_org, parse_outlined
from orgkit.org import syntax as sx
from orgkit.org.acyclic import collector_paused
from orgkit.org.text import decode_org
from conftest import shared_path


def _passages(chunks) -> list[tuple]:
    return [(c.node.id, c.line, c.heading, c.body, c.section.line if c.section else None) for c in chunks]


def test_heading_pattern_without_tags_gives_the_same_groups() -> None:
    todo = ("TODO", "DONE", "NEXT")
    keywords = "|".join(sorted(todo, key=len, reverse=True))
    full = re.compile(rf"(\*+)(?: +({keywords}))?(?: +(\[#.\]))?(?: +(.*?))??(?:[ \t]+{sx.TAGS})?[ \t]*$")
    pattern = sx.heading_pattern(todo)
    parts = ["*", " ", "  ", "\t", "TODO", "NEXT", "TODOX", "[#A]", "[#", "title", ":", ":a:", ":a:b:",
             "\n", "é", " :t:", " :t: ", "\t:x:\t", "[[id:x][y]]"]
    rng = random.Random(4)
    matched = 0
    for _ in range(30_000):
        line = rng.choice(["* ", "** ", "*"]) + "".join(rng.choice(parts) for _ in range(rng.randint(0, 8)))
        want, got = full.match(line), pattern.match(line)
        assert (want is None) == (got is None), line
        if want:
            matched += 1
            assert [want.span(k) for k in range(6)] == [got.span(k) for k in range(6)], line
            assert want.groups() == got.groups(), line
    assert matched > 10_000


@pytest.mark.parametrize("text", [
    "#+TODO: FOO | BAR\n* FOO bar :t:\n:PROPERTIES:\n:ID: x\n:END:\ntext\n** BAR baz\nmore\n",
    # A `#+TODO:` line inside a source block declares nothing, for the parser and a fresh outline alike.
    "#+begin_src\n#+TODO: FOO\n#+end_src\n* FOO bar\n:PROPERTIES:\n:ID: x\n:END:\ntext\n** FOO baz\nmore\n",
    ":PROPERTIES:\n:ID: top\n:END:\n#+title: T\n* [50%] A [[id:q][link]]\n** \n*** C :tag:\nbody\n",
])
def test_passages_from_the_parsed_outline_match_a_fresh_outline(text: str) -> None:
    parsed, outline = parse_outlined(text, "x.org")
    assert _passages(chunk_file(parsed, text, outline)) == _passages(chunk_file(parse_org(text, "x.org"), text))


def test_passages_of_real_notes_match_a_fresh_outline() -> None:
    files = sorted(shared_path("corpora", "braindump").rglob("*.org"))
    assert files
    for path in files:
        text = decode_org(path.read_bytes())
        parsed, outline = parse_outlined(text, path.name)
        assert parsed.nodes == parse_org(text, path.name).nodes
        assert _passages(chunk_file(parsed, text, outline)) == _passages(chunk_file(parsed, text)), path


def test_json_fields_are_the_bytes_json_dumps_writes() -> None:
    rng = random.Random(1)

    def word() -> str:
        return "".join(chr(rng.choice([rng.randint(0, 0x7F), rng.randint(0, 0xFFFF), rng.randint(0, 0x10FFFF)]))
                       for _ in range(rng.randint(0, 8)))

    for _ in range(5_000):
        items = [word() for _ in range(rng.randint(0, 4))]
        values = {word(): word() for _ in range(rng.randint(0, 4))}
        assert _json_strings(items) == json.dumps(items)
        assert _json_object(values) == json.dumps(values)


def test_the_cycle_collector_runs_again_after_bulk_work() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError):
        with collector_paused():
            raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()

"""Source text: units with exact spans, and quotes found exactly or after folding."""

from __future__ import annotations

from hypothesis import given, strategies as st

from orgkit.extract.anchor import find_quote
from orgkit.extract.units import segment

MARKDOWN = """---
title: front matter is skipped
---
# A decision

* Status: accepted

## Context

We have a problem. It is hard, e.g. when it rains.
The lines are
hard-wrapped.

- an item that goes on
  over two lines
  - a nested item

| a | b |
|---|---|
| one | two |

```python
code = "is skipped"
```

> A quoted note.
"""


def test_units_carry_exact_spans_sections_and_kinds() -> None:
    doc = segment(MARKDOWN)
    assert doc.title == "A decision"
    for unit in doc.units:
        assert MARKDOWN[unit.start:unit.end] == unit.text
    texts = [(u.kind, u.text, u.section[-1] if u.section else None, u.depth) for u in doc.units]
    assert ("item", "Status: accepted", "A decision", 0) in texts
    assert ("sentence", "We have a problem.", "Context", 0) in texts
    assert ("sentence", "It is hard, e.g. when it rains.", "Context", 0) in texts
    assert ("sentence", "The lines are\nhard-wrapped.", "Context", 0) in texts
    assert ("item", "an item that goes on\n  over two lines", "Context", 0) in texts
    assert ("item", "a nested item", "Context", 1) in texts
    assert ("row", "one | two", "Context", 0) in texts
    assert ("sentence", "A quoted note.", "Context", 0) in texts
    assert not any("skipped" in t for _, t, _, _ in texts)


def test_org_sources_skip_drawers_keywords_and_blocks() -> None:
    text = ":PROPERTIES:\n:ID: x\n:END:\n#+title: Org source\n\n* Context\nA line.\n#+begin_src sh\nls\n#+end_src\n"
    doc = segment(text, "org")
    assert doc.title == "Org source"
    assert [(u.kind, u.text) for u in doc.units] == [("heading", "Context"), ("sentence", "A line.")]


def test_quotes_are_found_exactly_then_folded_and_mapped_back() -> None:
    text = "He said “hello   there”\nand  left. He said “hello there” again."
    assert find_quote(text, "hello   there") == (9, 22)
    start, end = find_quote(text, 'said "hello there" and left.')
    assert (start, end) == (3, 34) and text[start:end] == "said “hello   there”\nand  left."
    start, end = find_quote(text, "He said 'hello there'".replace("'", '"'), near=40)
    assert start > 30 and text[start:end].startswith("He said")
    assert find_quote(text, "not there") is None and find_quote(text, "   ") is None
    marked = "Use **`remark`** for\nmarkdown."
    start, end = find_quote(marked, "Use remark for markdown.")
    assert marked[start:end] == marked


@given(st.text(alphabet=st.sampled_from("ab \n\t“”‘’'\"xy"), min_size=1, max_size=60), st.data())
def test_a_found_quote_is_always_a_span_of_the_text(text: str, data) -> None:
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    span = find_quote(text, text[i:j])
    if text[i:j].strip():
        assert span is not None
        start, end = span
        assert 0 <= start < end <= len(text)
        folded = lambda s: " ".join(s.translate(str.maketrans("“”‘’", "\"\"''")).split())
        assert folded(text[start:end]) == folded(text[i:j])


@given(st.lists(st.sampled_from(["* a heading", "** b", "#+end_quote", "#+title: x", ":ID: y", ":END:", "# note",
                                 ", comma", ": fixed", "plain words", "  indented", "", "**bold** text",
                                 "-----"]), min_size=1, max_size=6))
def test_a_verbatim_block_shows_its_text_and_makes_no_structure(lines: list[str]) -> None:
    from orgkit.org import parse_org
    from orgkit.org.escape import read_verbatim_block, verbatim_block

    text = "\n".join(lines)
    note = ":PROPERTIES:\n:ID: n\n:END:\n#+title: T\n\n" + verbatim_block(text)
    assert read_verbatim_block(verbatim_block(text)) == text
    parsed = parse_org(note, "n.org")
    assert [n.id for n in parsed.nodes] == ["n"] and parsed.nodes[0].title == "T"

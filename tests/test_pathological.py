"""Inputs that once made parsing, passage building or scanning super-linear.

Each runs at a size where quadratic code took tens of seconds; the bounds are
loose (a shared machine), the doubling figures are in bench/README.md.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from orgkit.index.chunks import chunk_file
from orgkit.org import parse_org
from orgkit.org.outline import Outline
from orgkit.retrieve.scan import scan


def timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


@pytest.mark.parametrize("line", ["#+begin_src python", "a \\( b [[id:x][y]]", "see [[a][b and more",
                                  "x $$ y", "@@html: z", "{{{m(a"])
def test_unclosed_openers_parse_in_linear_time(line: str) -> None:
    text = "* H\n" + f"{line}\n" * 20_000
    assert timed(lambda: parse_org(text, "x.org")) < 5


def test_a_long_run_of_backslashes_in_a_link_target() -> None:
    text = "[[" + "\\" * 5000 + "x\n"
    assert timed(lambda: parse_org(text, "x.org")) < 2


def test_unclosed_objects_still_leave_later_links() -> None:
    text = "* H\n:PROPERTIES:\n:ID: h\n:END:\n\\( open [[id:u]]\n[[a][b open https://example.com\n"
    parsed = parse_org(text, "x.org")
    # The unclosed \( hides nothing after it; the unclosed description neither.
    assert [l.dest for l in parsed.links] == ["u", "https://example.com"]


def test_passages_of_many_nodes_with_loose_headings_between() -> None:
    text = "".join(f"* N{k}\n:PROPERTIES:\n:ID: id-{k}\n:END:\ntext\n* Loose {k}\nmore\n"
                   for k in range(12_500))
    parsed = parse_org(text, "x.org")
    chunks = []
    assert timed(lambda: chunks.extend(chunk_file(parsed, text))) < 5
    # each loose heading is a unit of its own, named by its locator (org/units.py)
    assert len(chunks) == 25_000 and [c.node.id for c in chunks[-2:]] == ["id-12499", "x.org::*Loose 12499"]


def test_scan_of_a_deep_outline(tmp_path: Path) -> None:
    depth = 3000  # a 4.5 MB file
    text = "".join(f"{'*' * (k + 1)} Level {k}{' marker' if k % 100 == 0 else ''}\n" for k in range(depth))
    (tmp_path / "deep.org").write_text(text)
    hits = []
    assert timed(lambda: hits.extend(scan(tmp_path, "marker").hits)) < 5
    assert len(hits) == 30 and hits[-1].olp[-1] == "Level 2899"
    outline = Outline(text)
    assert outline.place(depth - 1).olp[:2] == ["Level 0 marker", "Level 1"]

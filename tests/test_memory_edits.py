"""The org changes proposals make: only the lines they need, in the node's own section."""

from __future__ import annotations

import pytest

from orgkit.errors import OrgkitError
from orgkit.memory import edits
from orgkit.org import parse_org

TEXT = """:PROPERTIES:
:ID:       file-id
:END:
#+title: A note

Intro.

* Head :a:
:PROPERTIES:
:ID:       head-id
:END:
Some text.

** Child
child text
"""


def test_a_link_goes_to_the_end_of_the_nodes_own_section() -> None:
    out = edits.add_link(TEXT, "x.org", "head-id", "dest-id", "Dest [1]")
    assert "Some text.\n\n- [[id:dest-id][Dest (1)]]\n\n** Child\n" in out
    links = parse_org(out, "x.org").links
    assert [(l.source, l.dest) for l in links] == [("head-id", "dest-id")]
    with pytest.raises(OrgkitError, match="already links to dest-id"):
        edits.add_link(out, "x.org", "head-id", "dest-id", "again")
    top = edits.add_link(TEXT, "x.org", "file-id", "dest-id", "Dest")
    assert "Intro.\n\n- [[id:dest-id][Dest]]\n\n* Head :a:" in top


def test_tags_go_to_the_heading_or_the_filetags_line() -> None:
    out = edits.add_tag(TEXT, "x.org", "head-id", "b")
    assert "* Head :a:b:\n" in out
    out = edits.add_tag(out, "x.org", "file-id", "top")
    assert "#+title: A note\n#+filetags: :top:\n" in out
    out = edits.add_tag(out, "x.org", "file-id", "more")
    assert "#+filetags: :top:more:\n" in out
    nodes = {n.id: n.tags for n in parse_org(out, "x.org").nodes}
    assert nodes["head-id"] == ["top", "more", "a", "b"]
    with pytest.raises(OrgkitError, match="already tagged"):
        edits.add_tag(out, "x.org", "head-id", "b")
    with pytest.raises(OrgkitError, match="invalid tag"):
        edits.add_tag(out, "x.org", "head-id", "two words")


def test_crlf_files_keep_their_line_ends() -> None:
    crlf = TEXT.replace("\n", "\r\n")
    out = edits.append(crlf, "x.org", "file-id", "Appended line.")
    assert "Intro.\r\n\r\nAppended line.\r\n\r\n* Head" in out
    assert "\n" not in out.replace("\r\n", "")
    bom = edits.add_tag("\ufeff" + TEXT, "x.org", "file-id", "t")
    assert bom.startswith("\ufeff:PROPERTIES:\n") and "#+title: A note\n#+filetags: :t:\n" in bom


def test_a_missing_node_is_an_error() -> None:
    with pytest.raises(OrgkitError, match="no node gone-id"):
        edits.append(TEXT, "x.org", "gone-id", "text")

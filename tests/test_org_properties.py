"""Property-based tests: `parse_org` on random org-ish text never raises, and
what it returns is consistent with the text it was given."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orgkit.org import decode_org, parse_org
from orgkit.org.text import UndecodableFile

IDS = ["a", "b", "c-1", "ü", "x y"]

_word = st.sampled_from([
    "foo", "Bar", "TODO", "DONE", "NEXT", "[#A]", "[#Z]", "[1/2]", "[50%]", ":tag:",
    ":a:b:", "é", "日本", "🎉", "=verb=", "~code~", "*bold*", "$x$", "\\(y\\)",
    "src_py{1}", "@@html:x@@", "{{{m(1)}}}", "<<t>>", "[fn:1]", "\\", '"', "'",
])
_link = st.one_of(
    st.builds(lambda i: f"[[id:{i}]]", st.sampled_from(IDS)),
    st.builds(lambda i, d: f"[[id:{i}][{d}]]", st.sampled_from(IDS), st.sampled_from(["d", "two\nlines", ""])),
    st.sampled_from([
        "https://example.com/x", "<https://example.com/y>", "id:plain", "ID:upper",
        "[[file:x.org::*h]]", "[[./rel.org]]", "[[#custom]]", "[[(ref)]]", "[[fuzzy]]",
        "[[id:unclosed", "[[", "]]", "[[id:a\\]b]]", "<id:angle\n  more>",
    ]),
)
_inline = st.lists(st.one_of(_word, _link, st.text(max_size=6)), max_size=6).map(" ".join)


def _drawer(kind: str) -> st.SearchStrategy[str]:
    prop = st.one_of(
        st.builds(lambda i: f":ID: {i}", st.sampled_from(IDS)),
        st.sampled_from([
            ":ID:", ":ROAM_EXCLUDE: t", ":ROAM_EXCLUDE: nil", ':ROAM_ALIASES: "a b" c',
            ':ROAM_ALIASES: "open', ":ROAM_ALIASES+: more", ":ROAM_REFS: @k [cite:@a;@b] https://r.com",
            ':ROAM_REFS: "bad', ":SEE: [[id:a]]", "not a property", ":: x", ":id: lower",
        ]),
    )
    return st.lists(prop, max_size=4).map(
        lambda props: "\n".join([f":{kind}:"] + props + [":END:"])
    )


_id_drawer = st.builds(
    lambda i, extra: f":PROPERTIES:\n:ID: {i}\n{extra}:END:",
    st.sampled_from(IDS),
    st.sampled_from(["", ":ROAM_EXCLUDE: t\n", ':ROAM_ALIASES: "x y" z\n', ":ROAM_REFS: @k\n"]),
)

_line = st.one_of(
    _inline,
    st.builds(lambda n, t: "*" * n + " " + t, st.integers(1, 5), _inline),
    st.builds(lambda n, t, d: "*" * n + " " + t + "\n" + d, st.integers(1, 5), _inline, _id_drawer),
    st.builds(lambda n, t, d: "*" * n + " " + t + "\n" + d, st.integers(1, 5), _inline, _id_drawer),
    st.sampled_from(["*", "* ", "** :t:", "*bold* not a heading"]),
    _drawer("PROPERTIES"),
    _drawer("properties"),
    _drawer("LOGBOOK"),
    st.builds(lambda k, v: f"#+{k}: {v}", st.sampled_from([
        "title", "TITLE", "filetags", "TODO", "SEQ_TODO", "caption", "name", "attr_html",
        "transclude", "author", "results[x]", "caption[s]",
    ]), _inline),
    st.builds(lambda b, body: f"#+begin_{b}\n{body}\n#+end_{b}",
              st.sampled_from(["src", "example", "quote", "verse", "comment", "export", "note"]), _inline),
    st.sampled_from([
        "#+begin_src", "#+end_src", "#+begin_quote", ":END:", ":NOTES:", "# comment [[id:a]]",
        ": fixed [[id:a]]", "SCHEDULED: <2022-01-01 Sat>", "| a | [[id:b]] |", "- item [[id:c]]",
        "\\begin{equation}", "\\end{equation}", "", "   ", "\t", "\r", "#+", "#+:", ":", "::",
    ]),
    st.text(max_size=20),
)


@st.composite
def org_texts(draw) -> str:
    lines = draw(st.lists(_line, max_size=25))
    if draw(st.booleans()):
        lines.insert(0, draw(_id_drawer))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


def _check(text: str, path: str = "dir/note.org") -> None:
    out = parse_org(text, path)
    n = len(text)
    ids = {node.id for node in out.nodes}
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    for node in out.nodes:
        assert node.file == path
        assert 1 <= node.pos <= max(n, 1)
        assert 0 <= node.start <= node.end <= n
        assert node.level == 0 or text[node.start:].startswith("*" * node.level + " ")
        assert 1 <= node.line <= len(starts)
        assert starts[node.line - 1] == node.start or node.level == 0
        assert node.title is not None
        assert isinstance(node.tags, list) and isinstance(node.olp, list)
    for link in out.links:
        assert link.source in ids
        assert 1 <= link.pos <= n
        line_start = starts[link.line - 1]
        line_end = starts[link.line] if link.line < len(starts) else n + 1
        assert line_start < link.pos <= line_end, (link, line_start, line_end)
        assert link.file == path


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(org_texts())
def test_parse_org_on_org_ish_text(text: str) -> None:
    _check(text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_parse_org_on_any_text(text: str) -> None:
    _check(text, "any.org")


@settings(max_examples=100, deadline=None)
@given(org_texts())
def test_decoded_bytes_parse_like_text(text: str) -> None:
    """Through `decode_org` (BOM dropped, all-CRLF read as LF), the invariants still hold;
    text with a NUL byte is refused as binary instead."""
    data = text.encode("utf-8")
    if "\x00" in text:
        with pytest.raises(UndecodableFile):
            decode_org(data)
        return
    _check(decode_org(data))

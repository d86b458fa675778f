"""orgkit against org-roam itself: the same directory, the same nodes and links.

org-roam 2.2 (in Emacs, through `tests/roam.py`) builds its database over a
temporary copy of `tests/roam_cases/` (small files, one edge case each) and
of the braindump corpus; `Vault.load` reads the same copy. Every node must
agree in every field org-roam stores, and every link as a multiset.

Files under `roam_cases/deliberate/` are where orgkit differs on purpose
(org-roam drops data there); they are checked against the documented
expectation in DELIBERATE instead.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import roam
from orgkit.vault import Vault, iter_org_files

CASES = Path(__file__).resolve().parent / "roam_cases"
SHARED = Path(__file__).resolve().parents[2] / "shared"
DELIBERATE_DIR = "deliberate/"
BLIND = Path(__file__).resolve().parents[1] / "bench" / "retrieval_blind"


@dataclass
class Deliberate:
    """What org-roam does with a file and what orgkit does instead."""

    why: str
    roam_error: str  # in Emacs' stderr: org-roam gave up on the whole file
    nodes: dict[str, dict] = field(default_factory=dict)  # id -> fields orgkit must have
    links: list[tuple[str, str]] = field(default_factory=list)  # (source, dest) orgkit keeps
    warning: str = ""


DELIBERATE = {
    "deliberate/aliases_unterminated.org": Deliberate(
        why="an unterminated quote in ROAM_ALIASES makes org-roam drop the whole file",
        roam_error="aliases_unterminated.org with error End of file during parsing",
        nodes={
            "deliberate-aliases-unterminated": {"aliases": [], "title": "An unterminated quote in ROAM_ALIASES"},
            "deliberate-aliases-unterminated-heading": {"aliases": ["fine"], "level": 1},
        },
        links=[("deliberate-aliases-unterminated-heading", "file-node-basic")],
        warning="deliberate/aliases_unterminated.org:1: ROAM_ALIASES not read",
    ),
    "deliberate/refs_unterminated.org": Deliberate(
        why="an unterminated quote in ROAM_REFS makes org-roam drop the whole file",
        roam_error="refs_unterminated.org with error End of file during parsing",
        nodes={
            "deliberate-refs-unterminated": {"refs": []},
            "deliberate-refs-unterminated-heading": {"refs": [], "title": "Heading with a bad ref"},
        },
        links=[("deliberate-refs-unterminated-heading", "file-node-basic")],
        warning="deliberate/refs_unterminated.org:6: ROAM_REFS not read",
    ),
    "deliberate/heading_no_title_tags.org": Deliberate(
        why="a heading with an ID and tags but no title: org-roam skips the node, then "
            "fails on its tags (foreign key) and drops the whole file",
        roam_error="heading_no_title_tags.org with error SQL constraint violation",
        nodes={
            "deliberate-no-title-tags": {"level": 0},
            "deliberate-no-title-tags-good": {"level": 1, "title": "A good heading"},
        },
        warning="deliberate/heading_no_title_tags.org:6: heading with an ID but no title",
    ),
    "deliberate/heading_no_title_links.org": Deliberate(
        why="a heading with an ID but no title and a link under it: org-roam skips the "
            "node, fails on the link's source (foreign key) and drops the whole file; "
            "orgkit gives the link to the enclosing node",
        roam_error="heading_no_title_links.org with error SQL constraint violation",
        nodes={"deliberate-no-title-links": {"level": 0}},
        links=[("deliberate-no-title-links", "file-node-basic")],
        warning="deliberate/heading_no_title_links.org:6: heading with an ID but no title",
    ),
}


# --- building both sides once per session --------------------------------------------


@dataclass
class Both:
    roam: roam.RoamDB
    vault: Vault

    def __repr__(self) -> str:  # keeps pytest's failure output readable
        return f"Both({self.vault.root.name}: {len(self.roam.nodes)} org-roam nodes)"


def _copy_writable(src: Path, dest: Path) -> Path:
    """Copy a tree keeping symlinks (the dangling `.#lock.org`), made writable
    (CI's shared/ has no write bits, and Emacs and pytest's cleanup need them)."""
    shutil.copytree(src, dest, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return dest


def _build(src: Path, dest: Path) -> Both:
    roam.skip_unless_available()
    root = _copy_writable(src, dest)
    return Both(roam.build_db(root), Vault.load(root))


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> Both:
    return _build(CASES, tmp_path_factory.mktemp("roam") / "cases")


@pytest.fixture(scope="module")
def braindump(tmp_path_factory) -> Both:
    src = SHARED / "corpora" / "braindump"
    if not src.is_dir():
        pytest.skip(f"{src} is absent (the shared corpora are not part of a clone)")
    return _build(src, tmp_path_factory.mktemp("roam") / "braindump")


@pytest.fixture(scope="module", params=["roamdaily", "roamdaily2"])
def roamdaily(request, tmp_path_factory) -> Both:
    """Two org-roam folders of daily notes and permanent notes (bench/retrieval_blind/): TODO items,
    heading nodes with their own IDs, aliases and tags."""
    return _build(BLIND / request.param, tmp_path_factory.mktemp("roam") / request.param)


# --- comparing -----------------------------------------------------------------------

NODE_FIELDS = ("file", "level", "title", "olp", "todo", "priority")
# Compared ignoring order: tags and refs as sets, aliases as a multiset.
UNORDERED = {"tags": set, "refs": set, "aliases": lambda xs: sorted(xs)}


def orgkit_dest(kind: str, path: str) -> str:
    """org-roam's (type, path) of a link, written as orgkit's `dest`."""
    if kind in ("id", "file", "fuzzy"):
        return path
    if kind == "custom-id":
        return "#" + path
    if kind == "coderef":
        return f"({path})"
    return f"{kind}:{path}"


def node_diffs(roam_nodes, orgkit_nodes) -> list[str]:
    """One readable line per disagreement: missing nodes, then differing fields."""
    theirs = {n.id: n for n in roam_nodes}
    ours = {n.id: n for n in orgkit_nodes}
    diffs = []
    for nid in sorted(theirs.keys() - ours.keys()):
        n = theirs[nid]
        diffs.append(f"only in org-roam: {nid} ({n.file}, level {n.level}, {n.title!r})")
    for nid in sorted(ours.keys() - theirs.keys()):
        n = ours[nid]
        diffs.append(f"only in orgkit:   {nid} ({n.file}:{n.line}, level {n.level}, {n.title!r})")
    for nid in sorted(theirs.keys() & ours.keys()):
        a, b = theirs[nid], ours[nid]
        for name in NODE_FIELDS:
            if getattr(a, name) != getattr(b, name):
                diffs.append(f"{nid} ({b.file}:{b.line}) {name}: org-roam {getattr(a, name)!r} != orgkit {getattr(b, name)!r}")
        for name, norm in UNORDERED.items():
            if norm(getattr(a, name)) != norm(getattr(b, name)):
                diffs.append(f"{nid} ({b.file}:{b.line}) {name}: org-roam {getattr(a, name)!r} != orgkit {getattr(b, name)!r}")
    return diffs


def multiset_diffs(label: str, theirs: Counter, ours: Counter) -> list[str]:
    diffs = []
    for key in sorted(theirs.keys() | ours.keys(), key=repr):
        if theirs[key] != ours[key]:
            diffs.append(f"{label} {key}: org-roam x{theirs[key]}, orgkit x{ours[key]}")
    return diffs


def id_links(both: Both, keep) -> tuple[Counter, Counter]:
    theirs = Counter((l.source, l.dest) for l in both.roam.links if l.type == "id" and keep(l.source))
    ours = Counter((l.source, l.dest) for l in both.vault.links if l.type == "id" and keep(l.source))
    return theirs, ours


def other_links(both: Both, keep) -> tuple[Counter, Counter]:
    theirs = Counter(
        (l.source, orgkit_dest(l.type, l.dest), l.type)
        for l in both.roam.links if l.type != "id" and keep(l.source)
    )
    ours = Counter((l.source, l.dest, l.type) for l in both.vault.links if l.type != "id" and keep(l.source))
    return theirs, ours


def report(title: str, diffs: list[str], both: Both) -> str:
    lines = [f"{title}: {len(diffs)} difference(s)"] + diffs[:80]
    if len(diffs) > 80:
        lines.append(f"... and {len(diffs) - 80} more")
    if both.roam.warnings:
        lines += ["", "Emacs warnings:"] + both.roam.warnings[:20]
    return "\n".join(lines)


def _outside_deliberate(both: Both):
    """A filter on node IDs: those of files outside roam_cases/deliberate/."""
    deliberate_ids = {n.id for n in both.vault.nodes if n.file.startswith(DELIBERATE_DIR)}
    return lambda nid: nid not in deliberate_ids


# --- the edge cases ------------------------------------------------------------------


def test_cases_same_files(cases: Both) -> None:
    ours = set(iter_org_files(cases.vault.root))
    dropped = {f for f in DELIBERATE}  # org-roam removes a file it failed on
    assert set(cases.roam.files) | dropped == ours, report(
        "indexed files", [f"only in org-roam: {f}" for f in sorted(set(cases.roam.files) - ours)]
        + [f"only in orgkit: {f}" for f in sorted(ours - set(cases.roam.files) - dropped)], cases)


def test_cases_nodes(cases: Both) -> None:
    keep = _outside_deliberate(cases)
    ours = [n for n in cases.vault.nodes if keep(n.id)]
    theirs = [n for n in cases.roam.nodes if keep(n.id)]
    assert len(ours) > 80
    diffs = node_diffs(theirs, ours)
    assert not diffs, report("nodes", diffs, cases)


def test_cases_id_links(cases: Both) -> None:
    theirs, ours = id_links(cases, _outside_deliberate(cases))
    assert sum(ours.values()) > 60
    diffs = multiset_diffs("id link (source, dest)", theirs, ours)
    assert not diffs, report("id links", diffs, cases)


def test_cases_other_links(cases: Both) -> None:
    theirs, ours = other_links(cases, _outside_deliberate(cases))
    assert sum(ours.values()) > 10
    diffs = multiset_diffs("link (source, dest, type)", theirs, ours)
    assert not diffs, report("other links", diffs, cases)


@pytest.mark.parametrize("path", sorted(DELIBERATE))
def test_cases_deliberate_differences(cases: Both, path: str) -> None:
    expected = DELIBERATE[path]
    # org-roam: still drops the whole file, as documented ...
    assert expected.roam_error in cases.roam.stderr, f"org-roam no longer fails on {path}: {expected.why}"
    assert not [n for n in cases.roam.nodes if n.file == path]
    # ... and orgkit keeps the rest of it, with a warning.
    ours = {n.id: n for n in cases.vault.nodes if n.file == path}
    assert set(ours) == set(expected.nodes), f"{path}: orgkit nodes {sorted(ours)}"
    for nid, fields in expected.nodes.items():
        for name, value in fields.items():
            assert getattr(ours[nid], name) == value, f"{path} {nid} {name}: {getattr(ours[nid], name)!r}"
    links = sorted((l.source, l.dest) for l in cases.vault.links if l.file == path)
    assert links == sorted(expected.links)
    assert any(w.startswith(expected.warning) for w in cases.vault.warnings), cases.vault.warnings


# --- a real notes directory ----------------------------------------------------------


def test_braindump_nodes(braindump: Both) -> None:
    assert len(braindump.roam.nodes) > 500
    diffs = node_diffs(braindump.roam.nodes, braindump.vault.nodes)
    assert not diffs, report("braindump nodes", diffs, braindump)


def test_braindump_id_links(braindump: Both) -> None:
    theirs, ours = id_links(braindump, lambda _: True)
    assert sum(theirs.values()) > 400
    diffs = multiset_diffs("id link (source, dest)", theirs, ours)
    assert not diffs, report("braindump id links", diffs, braindump)


def test_braindump_other_links(braindump: Both) -> None:
    theirs, ours = other_links(braindump, lambda _: True)
    diffs = multiset_diffs("link (source, dest, type)", theirs, ours)
    assert not diffs, report("braindump other links", diffs, braindump)


def test_braindump_same_files(braindump: Both) -> None:
    assert braindump.roam.files == list(iter_org_files(braindump.vault.root))


# --- Emacs' syntax table, as orgkit's plain-link pattern copies it --------------------


def test_daily_notes_nodes_and_links(roamdaily: Both) -> None:
    assert len(roamdaily.roam.nodes) > 50
    diffs = node_diffs(roamdaily.roam.nodes, roamdaily.vault.nodes)
    assert not diffs, report("roamdaily nodes", diffs, roamdaily)
    theirs, ours = id_links(roamdaily, lambda _: True)
    assert sum(theirs.values()) >= 50
    diffs = multiset_diffs("id link (source, dest)", theirs, ours)
    assert not diffs, report("roamdaily id links", diffs, roamdaily)


def test_emacs_char_sets() -> None:
    """`emacs_chars` holds what the installed Emacs' org-mode syntax table says (the sets
    decide where a plain link starts and ends)."""
    roam.skip_unless_available()
    from orgkit.org import emacs_chars

    emacs = roam.emacs_char_sets()
    assert emacs["NO_WORD_START"].split() == emacs_chars.NO_WORD_START.split()
    assert emacs["NON_WORD"].split() == emacs_chars.NON_WORD.split()
    # [:alnum:] is Python's \w, less `_` and WORD_NOT_ALNUM, plus ALNUM_NOT_WORD.
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    word = {ord(c) for c in re.findall(r"[^\W_]", every)}
    alnum = (word - _code_points(emacs_chars.WORD_NOT_ALNUM)) | _code_points(emacs_chars.ALNUM_NOT_WORD)
    assert alnum == _code_points(emacs["ALNUM"])


def _code_points(ranges: str) -> set[int]:
    """The code points of a list of hexadecimal code points and ranges (`emacs_chars`' form)."""
    out: set[int] = set()
    for item in ranges.split():
        first, _, last = item.partition("-")
        out.update(range(int(first, 16), int(last or first, 16) + 1))
    return out


# --- the reader for emacsql's printed values (no Emacs needed) ------------------------


@pytest.mark.parametrize("text, value", [
    ('"foo"', "foo"),
    (r'"a\nb\11c\"\\ \x41\ z"', 'a\nb\tc"\\ Az'),
    ('"é 日本"', "é 日本"),
    ('("a" "b c")', ["a", "b c"]),
    ("nil", None),
    ("65", 65),
    ('(("ID" . "x") ("CATEGORY" . "y"))', [("ID", "x"), ("CATEGORY", "y")]),
    ('(:outline ("a"))', [roam.Symbol(":outline"), ["a"]]),
    ('#("title" 0 5 (face bold))', "title"),
])
def test_read_lisp(text: str, value) -> None:
    assert roam.read_lisp(text) == value

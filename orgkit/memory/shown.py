"""A proposal's evidence as a reviewer reads it: each note by its title, with the passage of
it that matched.

The librarian records its evidence as note IDs and files (what it rests on, so a
changed note can be noticed); a person deciding needs the note's title and the
words that made it evidence. The passage is the paragraph of the note sharing
the most words with the other side: for a note the deposit was matched against,
the deposit's text; for the deposit itself, the notes it was matched against.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

_WORD = re.compile(r"\w{3,}")
PASSAGE_CHARS = 300


def shown_evidence(evidence: list[Any], deposit: str, read: Callable[[list[str]], dict[str, Any]]) -> list[Any]:
    """`evidence` with `title`, `line` and `passage` added to each note found (`read` gives
    the notes by ID: objects with title, line and content); the rest as it is."""
    ids = [e["id"] for e in evidence if isinstance(e, dict) and isinstance(e.get("id"), str)]
    docs = read(list(dict.fromkeys(ids + [deposit])))
    if not docs:
        return evidence
    deposit_words = _words(docs[deposit].content) if deposit in docs else set()
    others = set().union(*(_words(d.content) for i, d in docs.items() if i != deposit))
    out = []
    for item in evidence:
        key = item.get("id") if isinstance(item, dict) else None
        doc = docs.get(key) if isinstance(key, str) else None
        if doc is None:
            out.append(item)
            continue
        against = others if item["id"] == deposit else deposit_words
        out.append(item | {"title": doc.title, "line": doc.line, "passage": best_passage(doc.content, against)})
    return out


def best_passage(content: str, against: set[str]) -> str:
    """The paragraph of `content` (org text) sharing the most words with `against`, cut to a few lines."""
    best, best_shared = "", -1
    for paragraph in _paragraphs(content):
        shared = len(_words(paragraph) & against)
        if shared > best_shared:
            best, best_shared = paragraph, shared
    text = " ".join(best.split())
    return text if len(text) <= PASSAGE_CHARS else text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"


def _paragraphs(content: str) -> list[str]:
    """The prose of an org text, paragraph by paragraph (drawers, keywords and headlines left out)."""
    out: list[str] = []
    current: list[str] = []
    drawer = False
    for line in content.splitlines():
        bare = line.strip()
        if drawer:
            drawer = bare.upper() != ":END:"
            continue
        if re.fullmatch(r":[\w-]+:", bare):
            drawer = True
            continue
        if not bare or bare.startswith("#+") or re.match(r"\*+ ", bare):
            if current:
                out.append(" ".join(current))
                current = []
            continue
        current.append(bare)
    if current:
        out.append(" ".join(current))
    return out


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def reader(root: Path, locator: Any, texts: Any) -> Callable[[list[str]], dict[str, Any]]:
    """Notes by ID from the notes dir (through the index's locator when there is one), unknown IDs left out."""
    from ..retrieve.read import read as read_notes

    def read(ids: list[str]) -> dict[str, Any]:
        return {d.id: d for d in read_notes(root, ids, locator=locator, texts=texts).docs}

    return read

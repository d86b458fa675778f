"""The headline scan from the index: headings, titles and aliases held in memory, no ripgrep per call.

`context` ranks candidates with the headline scan beside search. The index
already holds every heading that has text under it, every node's title and
its aliases, so a process that keeps the index (serve, MCP, the team server)
reads them once per index generation and answers each scan from memory;
ripgrep stays the scan of `orgkit scan` and of notes with no index. Headlines
rank as scan.py's do for context: by how many of the query's words they hold.
"""

from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from ..index.store import Index
from ..index.words import WORD, query_terms

_HEADLINES_SQL = """
    SELECT o.title, n.id, n.title, n.file, min(c.line), n.level
      FROM outlines o JOIN chunks c ON c.outline = o.rowid JOIN nodes n ON n.rowid = c.node
     GROUP BY o.rowid, n.id, n.title, n.file, n.level
    UNION ALL SELECT n.title, n.id, n.title, n.file, n.line, n.level FROM nodes n
    UNION ALL SELECT a.alias, n.id, n.title, n.file, n.line, n.level FROM aliases a JOIN nodes n ON n.rowid = a.node
"""
_lock = threading.Lock()
_held: dict[tuple, "Headlines"] = {}  # (index, generation) -> its headlines


@dataclass(frozen=True)
class Headlines:
    """Every headline lower-cased in one text, a line each (so a word is found by one regex pass),
    where each starts, and the node row each names; and the distinct words of all the headlines in
    one text, with the headlines each is in."""

    text: str
    starts: list[int]
    rows: list[dict]
    words: "Words"

    def holding(self, word: str) -> set[int]:
        """The headlines (by position) that hold `word`.

        A word of letters and digits alone lies, wherever it occurs, inside one
        run of letters and digits of a headline: it is looked for in the
        distinct words, one each, not in every headline that repeats them.
        """
        if WORD.fullmatch(word):
            return self.words.holding(word)
        return {bisect.bisect_right(self.starts, m.start()) - 1 for m in re.finditer(re.escape(word), self.text)}


@dataclass(frozen=True)
class Words:
    """Distinct runs of letters and digits (as `WORD` cuts them) in one text, a line each, where each
    starts, and the headlines (by position) each is in."""

    text: str
    starts: list[int]
    where: list[list[int]]

    @classmethod
    def of(cls, headlines: list[str]) -> "Words":
        where: dict[str, list[int]] = {}
        for at, text in enumerate(headlines):
            for word in dict.fromkeys(WORD.findall(text)):
                where.setdefault(word, []).append(at)
        starts, offset = [], 0
        for word in where:
            starts.append(offset)
            offset += len(word) + 1
        return cls("\n".join(where), starts, list(where.values()))

    def holding(self, part: str) -> set[int]:
        """The headlines with a word that contains `part`."""
        found = {bisect.bisect_right(self.starts, m.start()) - 1 for m in re.finditer(re.escape(part), self.text)}
        return set().union(*(self.where[k] for k in found))


def headlines(index: Index) -> Headlines:
    """Every headline of the index with the node it names, read once per index generation."""
    with index.snapshot() as conn:
        key = (str(index.state_dir), index.database, index.generation(conn))
        with _lock:
            if key not in _held:
                # in one order on every engine (a tie between headlines goes to the first)
                found = sorted(conn.execute(_HEADLINES_SQL).fetchall(),
                               key=lambda r: (r[3], r[4] or 0, r[1], r[0] or ""))
                texts = [(text or "").lower().replace("\n", " ") for text, *_ in found]
                starts, at = [], 0
                for text in texts:
                    starts.append(at)
                    at += len(text) + 1
                _held.clear()
                _held[key] = Headlines("\n".join(texts), starts, [
                    {"id": node_id, "title": title, "file": file, "line": line, "level": level, "olp": []}
                    for _, node_id, title, file, line, level in found], Words.of(texts))
            return _held[key]


def headline_ranker(index: Index):
    """A ranker (candidates.Ranker) over the index's headlines: those holding any of the query's
    words, most words first, one row per node."""
    def ranked(root: Path, query: str, limit: int) -> tuple[list[dict], list[str]]:
        words = list(dict.fromkeys(w.lower() for w in query_terms(query)))
        if not words:
            return [], []
        held = headlines(index)
        count: dict[int, int] = {}
        for word in words:
            for at in held.holding(word):
                count[at] = count.get(at, 0) + 1
        seen: set[str] = set()
        out = []
        for at in sorted(count, key=lambda i: (-count[i], i)):
            row = held.rows[at]
            if row["id"] not in seen:
                seen.add(row["id"])
                out.append(row)
                if len(out) >= limit * 3:
                    break
        return out, []
    return ranked

"""The headline scan from the index: headings, titles and aliases held in memory, no ripgrep per call.

`context` ranks candidates with the headline scan beside search. The index
already holds every heading that has text under it, every node's title and
its aliases, so a process that keeps the index (serve, MCP, the team server)
reads them once per index generation and answers each scan from memory;
ripgrep stays the scan of `orgkit scan` and of notes with no index. Headlines
rank as scan.py's do for context: by how many of the query's words they hold.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ..index.store import Index
from .search import query_terms

_HEADLINES_SQL = """
    SELECT o.title, n.id, n.title, n.file, min(c.line), n.level
      FROM outlines o JOIN chunks c ON c.outline = o.rowid JOIN nodes n ON n.rowid = c.node
     GROUP BY o.rowid, n.id, n.title, n.file, n.level
    UNION ALL SELECT n.title, n.id, n.title, n.file, n.line, n.level FROM nodes n
    UNION ALL SELECT a.alias, n.id, n.title, n.file, n.line, n.level FROM aliases a JOIN nodes n ON n.rowid = a.node
"""
_lock = threading.Lock()
_held: dict[tuple, list[tuple[str, dict]]] = {}  # (index, generation) -> [(headline lower-cased, row)]


def headlines(index: Index) -> list[tuple[str, dict]]:
    """Every headline of the index with the node it names, read once per index generation."""
    with index.snapshot() as conn:
        key = (str(index.state_dir), index.database, index.generation(conn))
        with _lock:
            if key not in _held:
                rows = conn.execute(_HEADLINES_SQL).fetchall()
                _held.clear()
                _held[key] = [((text or "").lower(), {"id": node_id, "title": title, "file": file, "line": line,
                                                      "level": level, "olp": []})
                              for text, node_id, title, file, line, level in rows]
            return _held[key]


def headline_ranker(index: Index):
    """A ranker (candidates.Ranker) over the index's headlines: those holding any of the query's
    words, most words first, one row per node."""
    def ranked(root: Path, query: str, limit: int) -> tuple[list[dict], list[str]]:
        words = [w.lower() for w in query_terms(query)]
        if not words:
            return [], []
        scored = [(-sum(w in text for w in words), i, row) for i, (text, row) in enumerate(headlines(index))
                  if any(w in text for w in words)]
        seen: set[str] = set()
        out = []
        for _, _, row in sorted(scored, key=lambda s: (s[0], s[1])):
            if row["id"] not in seen:
                seen.add(row["id"])
                out.append(row)
                if len(out) >= limit * 3:
                    break
        return out, []
    return ranked

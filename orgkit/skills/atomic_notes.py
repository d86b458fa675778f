"""The atomic-notes skill: scan and search, let a model choose, deep-read the chosen.

Tangled from skills/atomic-notes.org; edit the note, then run `python tangle.py`.
"""

from __future__ import annotations

import re

from ..retrieve.candidates import find_candidates
from ..retrieve.read import read
from .model import Prompt, Request, Skill

NAME = "atomic-notes"
DEFAULT_LIMIT = 10
DEFAULT_BUDGET = 4000

def trigger(request: Request) -> bool:
    """Any request with words in it, except slash commands meant for other skills."""
    query = request.query.strip()
    return bool(re.search(r"\w", query)) and not query.startswith("/")

def symbolic(request: Request) -> dict:
    """Candidates from the headline scan and the search, fused, with their IDs."""
    limit = int(request.options.get("limit", DEFAULT_LIMIT))
    found = find_candidates(request.notes, request.query, limit=limit, rankers=request.rankers)
    return {"query": request.query, "candidates": [c.to_json() for c in found.candidates],
            "warnings": found.warnings}

REPLY_FORMAT = {
    "type": "object",
    "properties": {"read": {"type": "array", "items": {"type": "string"},
                            "description": "IDs of the notes to read in full, best first"}},
    "required": ["read"],
}


def neuro(request: Request, data: dict) -> Prompt:
    """The prompt asking a model which candidate notes to read in full."""
    lines = [
        "You are choosing which notes to read in full to answer a question.",
        f"Question: {request.query}",
        "",
        "Candidate notes (ID | title | outline path | found by):",
    ]
    for c in data["candidates"]:
        path = " > ".join(c["olp"]) or "-"
        lines.append(f"- {c['id']} | {c['title']} | {path} | {', '.join(c['sources'])}")
    if not data["candidates"]:
        lines.append("- (none found)")
    lines += [
        "",
        "Reply with JSON only, in this form: {\"read\": [\"ID\", ...]}",
        "List at most five IDs from the candidates above, the most useful first.",
        "Reply {\"read\": []} if none of them helps.",
    ]
    return Prompt(text="\n".join(lines), reply_format=REPLY_FORMAT)

def deep_read(request: Request, reply: dict) -> dict:
    """The org text of the notes the model chose (and their links, within the budget)."""
    chosen = [str(i) for i in reply.get("read", [])]
    result = read(request.notes, chosen,
                  depth=int(request.options.get("depth", 1)),
                  budget=int(request.options.get("budget", DEFAULT_BUDGET)))
    return {"notes": [d.to_json() for d in result.docs], "unknown": result.missing,
            "omitted": result.omitted, "warnings": result.warnings}

SKILL = Skill(
    name=NAME,
    priority=50,
    description="Scan and search the notes, let a model choose, deep-read the chosen notes",
    trigger=trigger,
    symbolic=symbolic,
    neuro=neuro,
    stages={"read": deep_read},
    reply_format=REPLY_FORMAT,
)


def capability() -> dict:
    return {"name": "core", "enabled": True, "skills": [SKILL], "schemas": {}}

"""A warm process for editors and agents: JSON requests in, JSON responses out, one a line.

The model and the vectors are loaded once and kept; before each request the
index is brought up to date (a stat per file, and only changed files re-read),
at most once per `recheck_after` seconds: an agent's burst of queries pays
for one check, and an edit is seen by the first query a moment later.
A request is `{"op": NAME, ...arguments}`; the response is `{"result": ...,
"warnings": [...]}` with the same result document as the matching command's
`--json`, or `{"error": "..."}` when the request fails, and the server goes on.
A request's `"request"` tag, if any, is echoed back. Ops are small functions in `OPS`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

from .embed import Embedder
from .errors import OrgkitError
from .index import Index, refresh
from .index.embedding import BackgroundEmbedder
from .retrieve.candidates import scan_ranked, search_ranker
from .retrieve.context import context
from .retrieve.locate import index_locator
from .retrieve.read import read
from .retrieve.scan import scan
from .retrieve.search import MODES, VectorCache, search
from .skills import Request, Registry, load_registry
from .skills.run import run_skill


@dataclass
class Session:
    """What stays warm between requests."""

    index: Index
    embedder: Embedder
    cache: VectorCache = field(default_factory=VectorCache)
    warnings: list[str] = field(default_factory=list)
    recheck_after: float = 1.0
    inline_limit: int = 64  # a backlog this small is embedded before answering; a larger one in the background
    _checked: dict[bool, float] = field(default_factory=dict)  # embed? -> when last checked
    _skills: Registry | None = None
    _background: BackgroundEmbedder | None = None

    @property
    def background(self) -> BackgroundEmbedder:
        if self._background is None:
            self._background = BackgroundEmbedder(self.index.root, self.index.state_dir, self.embedder)
        return self._background

    def skills(self) -> Registry:
        """The skills registry, loaded on the first skill request."""
        if self._skills is None:
            self._skills = load_registry(self.root)
        return self._skills

    @property
    def root(self) -> Path:
        return self.index.root

    def refresh(self, embed: bool = True) -> None:
        """Catch up with edits; new passages are embedded (a large backlog in the background).

        Queries answer at once from what is embedded, and rank by meaning more
        and more as the background run commits its batches.
        """
        now = time.monotonic()
        if now - max(self._checked.get(embed, -1e9), self._checked.get(True, -1e9)) >= self.recheck_after:
            self.warnings.extend(refresh(self.index).warnings)
            self._checked[embed] = time.monotonic()
            if embed:
                self.warnings.extend(self.background.catch_up(self.index, self.inline_limit))
        elif embed:
            line = self.background.status()
            self.warnings.extend([line] if line else [])

    def close(self) -> None:
        """Stop a background run after its current batch."""
        if self._background is not None:
            self._background.stop()


Op = Callable[[Session, dict], Any]


def _text(request: dict, key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str) or not value.strip():
        raise OrgkitError(f"{key!r} must be a non-empty string")
    return value


def _int(request: dict, key: str, default: int | None, minimum: int = 0) -> int | None:
    value = request.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise OrgkitError(f"{key!r} must be an integer of at least {minimum}")
    return value


def op_scan(session: Session, request: dict) -> Any:
    found = scan(session.root, _text(request, "query"), limit=_int(request, "limit", None, 1),
                 regex=bool(request.get("regex")))
    session.warnings.extend(found.warnings)
    return [h.to_json() for h in found.hits]


def op_search(session: Session, request: dict) -> Any:
    mode = request.get("mode", "hybrid")
    if mode not in MODES:
        raise OrgkitError(f"'mode' must be one of {', '.join(MODES)}")
    session.refresh(embed=mode != "lexical")
    found = search(session.index, _text(request, "query"), mode=mode,
                   limit=_int(request, "limit", 10, 1) or 10, embedder=session.embedder,
                   cache=session.cache)
    session.warnings.extend(found.warnings)
    return [h.to_json() for h in found.hits]


def op_read(session: Session, request: dict) -> Any:
    ids = request.get("ids", request.get("id"))
    ids = [ids] if isinstance(ids, str) else ids
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise OrgkitError("'ids' must be a list of node IDs")
    session.refresh(embed=False)
    result = read(session.root, ids, depth=_int(request, "depth", 0) or 0,
                  budget=_int(request, "budget", None, 1), locator=index_locator(session.index))
    session.warnings.extend(result.warnings)
    if result.missing:
        raise OrgkitError(f"unknown ID: {', '.join(result.missing)}")
    return [d.to_json() for d in result.docs]


def op_context(session: Session, request: dict) -> Any:
    session.refresh()
    result = context(session.index, _text(request, "query"), budget=_int(request, "budget", 4000, 1) or 4000,
                     embedder=session.embedder, cache=session.cache)
    return result.to_json()


def op_skill(session: Session, request: dict) -> Any:
    """One stage of a skill, with the session's model and vectors for its retrieval."""
    session.refresh()
    skill = session.skills().get(_text(request, "name"))
    reply = request.get("reply")
    if reply is not None and not isinstance(reply, dict):
        raise OrgkitError("'reply' must be the model's reply as a JSON object")
    options = request.get("options") or {}
    if not isinstance(options, dict):
        raise OrgkitError("'options' must be a JSON object")
    rankers = {"search": search_ranker(session.index, session.embedder, session.cache),
               "scan": scan_ranked}
    skill_request = Request(query=_text(request, "query"), notes=session.root,
                            options=options, rankers=rankers)
    return run_skill(skill, skill_request, request.get("stage") or "symbolic", reply)


def op_nodes(session: Session, request: dict) -> Any:
    session.refresh(embed=False)
    return session.index.nodes()


def op_links(session: Session, request: dict) -> Any:
    session.refresh(embed=False)
    node_id = request.get("id")
    if node_id is not None and not isinstance(node_id, str):
        raise OrgkitError("'id' must be a node ID")
    return session.index.links(node_id)


def op_backlinks(session: Session, request: dict) -> Any:
    session.refresh(embed=False)
    return session.index.backlinks(_text(request, "id"))


OPS: dict[str, Op] = {
    "scan": op_scan,
    "search": op_search,
    "read": op_read,
    "context": op_context,
    "nodes": op_nodes,
    "links": op_links,
    "backlinks": op_backlinks,
    "skill": op_skill,
}


def handle(session: Session, line: str) -> dict:
    """The response to one request line; never raises."""
    request_id = None
    session.warnings = []
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise OrgkitError("a request must be a JSON object with an \"op\"")
        request_id = request.get("request")
        op = OPS.get(request.get("op"))  # type: ignore[arg-type]
        if op is None:
            raise OrgkitError(f"unknown op {request.get('op')!r} (ops: {', '.join(OPS)})")
        response: dict = {"result": op(session, request), "warnings": list(dict.fromkeys(session.warnings))}
    except json.JSONDecodeError as exc:
        response = {"error": f"not JSON: {exc}"}
    except OrgkitError as exc:
        response = {"error": str(exc)}
    except Exception as exc:  # a bug must not end the server; the client hears of it
        response = {"error": f"internal error: {type(exc).__name__}: {exc}"}
    if request_id is not None:
        response["request"] = request_id
    return response


def serve(session: Session, stdin: IO[str], stdout: IO[str]) -> None:
    """Answer requests until end of input."""
    try:
        for line in stdin:
            if not line.strip():
                continue
            stdout.write(json.dumps(handle(session, line), ensure_ascii=False) + "\n")
            stdout.flush()
    finally:
        session.close()

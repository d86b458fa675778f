"""The librarian: a deposit -> proposals against the existing notes.

The deposit is split into numbered chunks; related notes come from hybrid
search over the index. With a model configured (the `librarian` role), the
model sees the chunks whole and as many related notes as the token budget has
room for after them (the deposit is never cut for the related notes' sake),
and replies with proposals as JSON, each citing chunk numbers. Without a
model, a deterministic librarian proposes links to the most related notes and
the tags they share, so the flow works offline.

A run is skipped when the deposit's content hash and the model are what the
last successful run saw (its watermark). A failed model call is recorded as
`failed` with its error and writes no watermark, so the next run tries again.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .. import llm
from ..config import Config, ensure_state_dir
from ..embed import Embedder
from ..errors import OrgkitError
from ..index import Index, refresh
from ..org.drawers import body_text
from ..retrieve.locate import index_locator
from ..retrieve.read import estimate_tokens, read
from ..retrieve.search import query_terms, search
from .proposals import store_proposals
from .resolver import Files, digest
from .store import Store, now

BUDGET = 6000  # tokens of deposit chunks plus related notes shown to the model
RELATED = 8  # related notes searched for
LINKS = 3  # links the deterministic librarian proposes
CHUNK_CHARS = 1200
QUERY_CHARS = 2000
DETERMINISTIC = "deterministic"
ROLE = "librarian"

SCHEMA = {
    "type": "object",
    "required": ["proposals"],
    "properties": {"proposals": {"type": "array", "items": {
        "type": "object",
        "required": ["kind", "chunks"],
        "properties": {
            "kind": {"enum": ["new", "append", "link", "tag"]},
            "chunks": {"type": "array", "items": {"type": "integer"}},
            "target": {"type": ["string", "null"]},
            "title": {"type": "string"}, "body": {"type": "string"}, "text": {"type": "string"},
            "dest": {"type": "string"}, "description": {"type": "string"}, "tag": {"type": "string"},
        },
    }}},
}


@dataclass
class Related:
    id: str
    title: str
    file: str
    tags: list[str]
    content: str


@dataclass
class Seen:
    """What the librarian was shown: the numbered chunks and the related notes (maybe trimmed)."""

    chunks: list[tuple[int, str]]
    notes: list[Related] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def numbered_chunks(body: str) -> list[tuple[int, str]]:
    """Paragraphs (long ones split at line ends), numbered from 1."""
    out: list[str] = []
    for para in re.split(r"\n[ \t]*\n", body.strip()):
        if not para.strip():
            continue
        piece = ""
        for line in para.split("\n"):
            if piece and len(piece) + len(line) > CHUNK_CHARS:
                out.append(piece)
                piece = ""
            piece = f"{piece}\n{line}" if piece else line
        out.append(piece)
    return list(enumerate(out, start=1))


def related_notes(cfg: Config, deposit_id: str, rel: str, title: str, body: str,
                  embedder: Embedder | None) -> tuple[list[Related], list[str]]:
    """The notes most related to the deposit, by hybrid search (words only without a model)."""
    index = Index.at(cfg.notes, ensure_state_dir(cfg))
    try:
        warnings = list(refresh(index, embedder=embedder).warnings)
        query = f"{title}\n{body}"[:QUERY_CHARS]
        if not query_terms(query):
            return [], warnings
        found = search(index, query, mode="hybrid", limit=RELATED + 4, embedder=embedder)
        warnings += found.warnings
        hits = [h for h in found.hits if h.file != rel and h.id != deposit_id][:RELATED]
        docs = read(cfg.notes, [h.id for h in hits], locator=index_locator(index))
        tags = _tags(index, [h.id for h in hits])
    finally:
        index.close()
    by_id = {d.id: d for d in docs.docs}
    return [Related(h.id, h.title, h.file, tags.get(h.id, []), by_id[h.id].content)
            for h in hits if h.id in by_id], warnings + docs.warnings


def _tags(index: Index, ids: list[str]) -> dict[str, list[str]]:
    from ..vault import read_org_file

    out: dict[str, list[str]] = {}
    for rel in {f for fs in index.locate(ids).values() for f in fs}:
        try:
            for node in read_org_file(index.root, rel).nodes:
                if node.id in ids:
                    out[node.id] = list(node.tags)
        except OrgkitError:
            continue
    return out


def within_budget(chunks: list[tuple[int, str]], related: list[Related], budget: int = BUDGET) -> Seen:
    """All the chunks, then related notes in rank order while they fit (the last one trimmed)."""
    seen = Seen(chunks)
    left = budget - sum(estimate_tokens(c) for _, c in chunks)
    for note in related:
        need = estimate_tokens(note.content)
        if need <= left:
            seen.notes.append(note)
            left -= need
        elif left >= 100:
            cut = note.content[: left * 4].rsplit("\n", 1)[0]
            seen.notes.append(Related(note.id, note.title, note.file, note.tags, cut + "\n[...]"))
            left = 0
        else:
            seen.left_out.append(note.id)
    return seen


def deterministic(deposit_id: str, seen: Seen) -> list[dict]:
    """Links to the most related notes that share words with the deposit, and the tags at
    least two of them share."""
    items = []
    sharing = [(note, cited) for note in seen.notes if (cited := _overlapping(seen.chunks, note))]
    for note, cited in sharing[:LINKS]:
        items.append({"kind": "link", "target": deposit_id, "chunks": cited,
                      "payload": {"dest": note.id, "description": note.title}})
    counts = Counter(t for note, _ in sharing for t in dict.fromkeys(note.tags))
    every = [n for n, _ in seen.chunks]
    for tag, n in sorted(counts.items()):
        if n >= 2:
            items.append({"kind": "tag", "target": deposit_id, "chunks": every, "payload": {"tag": tag}})
    return items


def _overlapping(chunks: list[tuple[int, str]], note: Related) -> list[int]:
    """The chunks sharing words with the note."""
    words = set(query_terms(f"{note.title} {note.content}"))
    return [n for n, text in chunks if words & set(query_terms(text))]


def messages(title: str, seen: Seen, persona: str) -> list[dict]:
    """The librarian's request: the deposit's numbered chunks, then the related notes by ID."""
    parts = [f"Deposit: {title}", "", "Numbered chunks of the deposit:"]
    parts += [f"[{n}] {text}" for n, text in seen.chunks]
    parts += ["", "Related notes (cite them by ID):"]
    for note in seen.notes:
        parts += [f"--- note {note.id}: {note.title} (tags: {' '.join(note.tags) or 'none'})",
                  note.content.strip()]
    if not seen.notes:
        parts.append("(none)")
    return [{"role": "system", "content": persona}, {"role": "user", "content": "\n".join(parts)}]


def model_items(data: dict, deposit_id: str) -> list[dict]:
    """The model's flat proposals as stored ones: kind, target, payload, chunks."""
    out = []
    for item in data.get("proposals", []):
        kind = item.get("kind")
        fields = {"new": ("title", "body"), "append": ("text",), "link": ("dest", "description"),
                  "tag": ("tag",)}.get(kind, ())
        target = item.get("target") or (deposit_id if kind in ("link", "tag") else None)
        out.append({"kind": kind, "target": None if kind == "new" else target,
                    "chunks": item.get("chunks") or [],
                    "payload": {f: item[f] for f in fields if f in item}})
    return out


@dataclass
class Outcome:
    status: str  # proposed | no-model | failed | skipped
    model: str = ""
    proposals: int = 0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def run(store: Store, deposit_id: str, *, embedder: Embedder | None = None, actor: str = "librarian") -> Outcome:
    """One librarian pass over a deposit; the caller holds the deposit's processing lock."""
    cfg = store.cfg
    dep = store.one("SELECT * FROM deposits WHERE id = ?", (deposit_id,))
    files = Files(cfg.notes)
    rel = files.file_of(deposit_id, dep["path"])
    text = files.read(rel) or ""
    sha = digest(text)
    try:
        target = llm.resolve(cfg, ROLE)
        model = f"{target.kind}:{target.model}"
    except llm.ModelUnavailable as exc:
        target, model, why = None, DETERMINISTIC, str(exc)
    mark = store.one("SELECT sha, model FROM watermarks WHERE subject = ?", (deposit_id,))
    if mark is not None and (mark["sha"], mark["model"]) == (sha, model):
        with store.tx() as conn:
            conn.execute("UPDATE deposits SET status = ? WHERE id = ?",
                         ("no-model" if model == DETERMINISTIC else "proposed", deposit_id))
        return Outcome("skipped", model)
    body = body_text(text)
    chunks = numbered_chunks(body)
    related, warnings = related_notes(cfg, deposit_id, rel, dep["title"], body, embedder)
    seen = within_budget(chunks, related)
    if target is None:
        items, status = deterministic(deposit_id, seen), "no-model"
        warnings.append(f"no model for the librarian ({why}); proposals from the deterministic librarian")
    else:
        try:
            reply = llm.complete_with(target, messages(dep["title"], seen, llm.persona(cfg, ROLE) + _guidance(cfg)),
                                      SCHEMA)
        except (llm.ModelFailure, OrgkitError) as exc:
            record_failure(store, deposit_id, model, str(exc), actor)
            return Outcome("failed", model, error=str(exc), warnings=warnings)
        items, status = model_items(reply.data, deposit_id), "proposed"
    evidence = {deposit_id: {"id": deposit_id, "file": rel, "sha": sha}}
    held = {deposit_id: text}
    for note in seen.notes:
        held[note.id] = files.read(note.file)
        evidence[note.id] = {"id": note.id, "file": note.file, "sha": digest(held[note.id])}
    with store.tx() as conn:
        stored = store_proposals(store, conn, deposit_id, model, items, evidence,
                                 {n for n, _ in chunks}, {n.id for n in seen.notes} | {deposit_id}, actor,
                                 held)
        conn.execute("UPDATE deposits SET status = ?, model = ?, error = NULL, processed_at = ? WHERE id = ?",
                     (status, model, now(), deposit_id))
        conn.execute("INSERT OR REPLACE INTO watermarks(subject, sha, model, at) VALUES (?,?,?,?)",
                     (deposit_id, sha, model, now()))
        store.audit(conn, actor, "librarian", deposit_id, model=model, status=status,
                    proposals=[p.id for p in stored], shown_notes=[n.id for n in seen.notes],
                    left_out=seen.left_out, chunks=len(chunks))
    return Outcome(status, model, len(stored), warnings=warnings)


def _guidance(cfg: Config) -> str:
    """With feedback.use_guidance on, the guidance file's bullets for the librarian's proposals."""
    if not cfg["feedback.use_guidance"]:
        return ""
    from ..feedback.guidance import guidance_prompt

    return guidance_prompt(cfg, ROLE, ["note", "append", "link", "tag"])


def record_failure(store: Store, deposit_id: str, model: str, error: str, actor: str) -> None:
    with store.tx() as conn:
        conn.execute("UPDATE deposits SET status = 'failed', model = ?, error = ?, processed_at = ? "
                     "WHERE id = ?", (model, error, now(), deposit_id))
        store.audit(conn, actor, "librarian-failed", deposit_id, model=model, error=error)

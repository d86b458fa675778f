"""The librarian: a deposit -> proposals against the existing notes.

The deposit is split into numbered chunks; related notes come from hybrid
search over the index. With a model configured (the `librarian` role), the
model sees the chunks whole and as many related notes as the token budget has
room for after them (the deposit is never cut for the related notes' sake),
and replies with proposals as JSON, each citing chunk numbers. Without a
model, a deterministic librarian decides on passage-level evidence
(`evidence.py`: which chunk of the deposit matches which passage of which
note): links only to notes past a calibrated threshold (a deposit about
something the notes do not cover gets its `admit` and nothing else, with the
reason), and tags the linked notes and near neighbours share. Both ways, a
deposit whose chunks largely repeat an existing note gets a `duplicate-of`
proposal naming the note and the overlap.

A deposit whose note is no longer a node (removed, or edited to carry
`:ROAM_EXCLUDE:`, or a shipped record naming a file without it) is `refused`
with the reason, and its pending proposals are withdrawn: no later run would
find it either, so it does not wait for the librarian forever.

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
from ..index.embedding import embed_small_backlog
from ..index.memo import IndexMemo
from ..org.drawers import body_text
from ..retrieve.locate import index_locator
from ..retrieve.read import read
from ..texts import estimate_tokens
from ..index.words import query_terms
from ..retrieve.search import search
from .evidence import NoteEvidence, gather
from .proposals import store_proposals
from .resolver import Files, NotANode, digest
from .store import Store

# Calibrated on bench/librarian_set.json's development part (bench/bench_librarian.py):
LINK_SCORE = 0.6  # a link target's best chunk-passage cosine, plus NAMED_BONUS when a chunk names it
NAMED_BONUS = 0.5
NAMED_FLOOR = 0.15  # a named note still needs this much passage evidence (off-topic findings stay under it)
NEIGHBOUR_SCORE = 0.3  # notes this close lend their tags (with the link targets)
NEIGHBOURS = 5
DUPLICATE = 0.5  # share of the deposit's word shingles held by one note: a near-duplicate
BUDGET = 6000  # tokens of deposit chunks plus related notes shown to the model
RELATED = 8  # related notes searched for
LINKS = 4  # links the deterministic librarian proposes at most
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


def consult_index(cfg: Config, deposit_id: str, rel: str, title: str, body: str,
                  chunks: list[tuple[int, str]], embedder: Embedder | None,
                  with_related: bool, memo: IndexMemo | None = None
                  ) -> tuple[list[Related], list[NoteEvidence], list[str]]:
    """The index brought up to date, then the passage evidence for the deposit's chunks and
    (for the model) the notes most related to it by hybrid search (words only without a model)."""
    index = Index.of(cfg, ensure_state_dir(cfg), memo)
    try:
        warnings = list(refresh(index).warnings)
        if embedder is not None and with_related:
            # As a query does: a small backlog now, a large one (a big deposit) left to `orgkit
            # index` or the server, so processing a deposit never embeds all of it inline.
            backlog = embed_small_backlog(index, embedder, cfg["search.inline_embed_limit"])
            warnings += [line for line in [backlog.warning()] if line]
        with index.snapshot() as conn:
            evidence = gather(conn, index.backend, chunks, {deposit_id, rel}, index.memo.stems)
        query = f"{title}\n{body[:QUERY_CHARS]}"[:QUERY_CHARS]
        if not with_related or not query_terms(query):
            return [], evidence, warnings
        found = search(index, query, mode="hybrid", limit=RELATED + 4, embedder=embedder)
        warnings += found.warnings
        hits = [h for h in found.hits if h.file != rel and h.id != deposit_id][:RELATED]
        docs = read(cfg.notes, [h.id for h in hits], locator=index_locator(index))
        tags = _tags(index, [h.id for h in hits])
    finally:
        index.close()
    by_id = {d.id: d for d in docs.docs}
    return [Related(h.id, h.title, h.file, tags.get(h.id, []), by_id[h.id].content)
            for h in hits if h.id in by_id], evidence, warnings + docs.warnings


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


def link_score(note: NoteEvidence) -> float:
    """How strongly the evidence supports a link: the best chunk-passage cosine, plus a bonus
    when a chunk names the note by its title (and the passages agree at least a little)."""
    named = bool(note.named_in) and note.best >= NAMED_FLOOR
    return note.best + (NAMED_BONUS if named else 0.0)


NO_LINK = "a new note, linked to nothing"  # what the librarian decided when it proposes no link


def link_targets(evidence: list[NoteEvidence], *, on_topic: bool | None = None,
                 demoted: frozenset[str] = frozenset()) -> tuple[list[NoteEvidence], str | None]:
    """The notes to propose links to, best first, and why there are none when there are none.

    `on_topic` is a relevance verdict from elsewhere (the search's floor), when there is one:
    False proposes nothing. Notes whose titles a person keeps rejecting as link targets
    (`demoted`, lower case) count half their score.
    """
    def score(note: NoteEvidence) -> float:
        return link_score(note) * (0.5 if note.title.lower() in demoted else 1.0)

    if on_topic is False:
        return [], f"{NO_LINK}: search finds no note on its subject (all below the relevance floor)"
    candidates = [n for n in evidence if n.overlap < DUPLICATE]  # a near-copy is a duplicate, not a link
    chosen = sorted((n for n in candidates if score(n) >= LINK_SCORE), key=lambda n: (-score(n), n.id))[:LINKS]
    if chosen:
        return chosen, None
    best = max((score(n) for n in candidates), default=0.0)
    return [], f"{NO_LINK}: no other note is close enough (best match {best:.2f}, {LINK_SCORE:.2f} needed)"


def duplicates(evidence: list[NoteEvidence]) -> list[NoteEvidence]:
    """Notes holding most of the deposit's text, most overlapping first."""
    return sorted((n for n in evidence if n.overlap >= DUPLICATE), key=lambda n: (-n.overlap, n.id))


def duplicate_items(deposit_id: str, evidence: list[NoteEvidence]) -> list[dict]:
    """A `duplicate-of` proposal for each note the deposit largely repeats."""
    return [{"kind": "duplicate-of", "target": deposit_id, "chunks": sorted(n.chunks),
             "payload": {"dest": n.id, "description": n.title, "overlap": round(n.overlap, 2)}}
            for n in duplicates(evidence)]


def proposed_tags(targets: list[NoteEvidence], evidence: list[NoteEvidence],
                  demoted: frozenset[str] = frozenset()) -> list[str]:
    """Tags held by at least two of the link targets and the nearest neighbours (the deposit
    is about what they share), except those a person keeps rejecting (`demoted`)."""
    near = [n for n in evidence if link_score(n) >= NEIGHBOUR_SCORE][:NEIGHBOURS]
    pool = {n.id: n for n in targets + near}
    counts = Counter(t for n in pool.values() for t in dict.fromkeys(n.tags))
    return sorted(t for t, k in counts.items() if k >= 2 and t.lower() not in demoted)


def deterministic(deposit_id: str, chunks: list[tuple[int, str]], evidence: list[NoteEvidence],
                  demoted: "Demoted | None" = None) -> tuple[list[dict], list[NoteEvidence], str | None]:
    """Links to the notes past the threshold (each citing the chunks that match it), the tags
    they and the near neighbours share, and `duplicate-of` for notes the deposit repeats;
    returns the items, the notes they rest on, and why there is no link when there is none."""
    demoted = demoted or Demoted()
    targets, why = link_targets(evidence, demoted=demoted.links)
    items = [{"kind": "link", "target": deposit_id, "chunks": sorted(n.chunks),
              "payload": {"dest": n.id, "description": n.title}} for n in targets]
    every = [n for n, _ in chunks]
    if targets:
        items += [{"kind": "tag", "target": deposit_id, "chunks": every, "payload": {"tag": tag}}
                  for tag in proposed_tags(targets, evidence, demoted.tags)]
    items += duplicate_items(deposit_id, evidence)
    return items, targets + duplicates(evidence), why


@dataclass(frozen=True)
class Demoted:
    """Link targets (by title) and tags a person keeps rejecting, lower case."""

    links: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()


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
    status: str  # proposed | no-model | failed | refused | skipped
    model: str = ""
    proposals: int = 0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def run(store: Store, deposit_id: str, *, embedder: Embedder | None = None, actor: str = "librarian",
        memo: IndexMemo | None = None) -> Outcome:
    """One librarian pass over a deposit; the caller holds the deposit's processing lock."""
    cfg = store.cfg
    dep = store.deposit_note(deposit_id)
    files = Files(cfg.notes)
    try:
        rel = files.file_of(deposit_id, dep.path)
    except NotANode as exc:
        record_refusal(store, deposit_id, str(exc), actor)
        return Outcome("refused", error=str(exc))
    text = files.read(rel) or ""
    sha = digest(text)
    try:
        target = llm.resolve(cfg, ROLE)
        model = f"{target.kind}:{target.model}"
    except llm.ModelUnavailable as exc:
        target, model, why = None, DETERMINISTIC, str(exc)
    if store.watermark(deposit_id) == (sha, model):
        with store.tx() as conn:
            store.set_deposit_status(conn, deposit_id, "no-model" if model == DETERMINISTIC else "proposed")
        return Outcome("skipped", model)
    body = body_text(text)
    chunks = numbered_chunks(body)
    related, evidence, warnings = consult_index(cfg, deposit_id, rel, dep.title, body, chunks, embedder,
                                                with_related=target is not None, memo=memo)
    no_link = None
    if target is None:
        items, rests_on, no_link = deterministic(deposit_id, chunks, evidence, _demoted(cfg))
        seen = Seen(chunks, [Related(n.id, n.title, n.file, n.tags, "") for n in rests_on])
        status = "no-model"
        warnings.append(f"no model for the librarian ({why}); proposals from the deterministic librarian")
    else:
        seen = within_budget(chunks, related)
        try:
            reply = llm.complete_with(target, messages(dep.title, seen, llm.persona(cfg, ROLE) + _guidance(cfg)),
                                      SCHEMA)
        except (llm.ModelFailure, OrgkitError) as exc:
            record_failure(store, deposit_id, model, str(exc), actor)
            return Outcome("failed", model, error=str(exc), warnings=warnings)
        twins = duplicates(evidence)
        items = model_items(reply.data, deposit_id) + duplicate_items(deposit_id, twins)
        seen.notes += [Related(n.id, n.title, n.file, n.tags, "") for n in twins
                       if n.id not in {r.id for r in seen.notes}]
        status = "proposed"
    evidence_of = {deposit_id: {"id": deposit_id, "file": rel, "sha": sha}}
    held: dict[str, str | None] = {deposit_id: text}
    for note in seen.notes:
        held[note.id] = files.read(note.file)
        evidence_of[note.id] = {"id": note.id, "file": note.file, "sha": digest(held[note.id])}
    with store.tx() as conn:
        stored = store_proposals(store, conn, deposit_id, model, items, evidence_of,
                                 {n for n, _ in chunks}, {n.id for n in seen.notes} | {deposit_id}, actor,
                                 held)
        store.record_proposed(conn, deposit_id, status, model, sha)
        store.audit(conn, actor, "librarian", deposit_id, model=model, status=status,
                    proposals=[p.id for p in stored], shown_notes=[n.id for n in seen.notes],
                    left_out=seen.left_out, chunks=len(chunks), no_link=no_link)
        if no_link is not None:
            store.set_admission_reason(conn, deposit_id, no_link)
    return Outcome(status, model, len(stored), warnings=warnings)


def _demoted(cfg: Config) -> Demoted:
    """With feedback.use_guidance on, the link targets and tags people keep rejecting: those
    whose `review` events for the librarian hold at least `feedback.min_events` rejections
    and more rejections than acceptances (undone decisions do not count)."""
    if not cfg["feedback.use_guidance"]:
        return Demoted()
    from ..feedback.events import load_events

    tally: dict[tuple[str, str], Counter] = {}
    for event in load_events(cfg):
        if event.source != "review" or event.extractor != ROLE or event.node_type not in ("link", "tag"):
            continue
        name = " ".join(str(event.before or "").split()).lower()
        if name:
            tally.setdefault((event.node_type, name), Counter())[event.action] += 1
    keeps = {key for key, c in tally.items()
             if c["reject"] >= cfg["feedback.min_events"] and c["reject"] > c["accept"] + c["edit"]}
    return Demoted(frozenset(n for kind, n in keeps if kind == "link"),
                   frozenset(n for kind, n in keeps if kind == "tag"))


def _guidance(cfg: Config) -> str:
    """With feedback.use_guidance on, the guidance file's bullets for the librarian's proposals."""
    if not cfg["feedback.use_guidance"]:
        return ""
    from ..feedback.guidance import guidance_prompt

    return guidance_prompt(cfg, ROLE, ["note", "append", "link", "tag"])


def record_failure(store: Store, deposit_id: str, model: str, error: str, actor: str) -> None:
    with store.tx() as conn:
        store.record_failed(conn, deposit_id, model, error)
        store.audit(conn, actor, "librarian-failed", deposit_id, model=model, error=error)


def record_refusal(store: Store, deposit_id: str, reason: str, actor: str) -> None:
    """The deposit ends `refused` with `reason`, its pending proposals withdrawn with it."""
    with store.tx() as conn:
        store.record_refused(conn, deposit_id, reason, actor)
        store.audit(conn, actor, "librarian-refused", deposit_id, reason=reason)

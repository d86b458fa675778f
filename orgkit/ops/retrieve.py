"""scan, read, search, context: the two retrieval stages and the deep read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import NotFound, OrgkitError
from . import declare
from .context import OpContext
from .spec import Op, Param

if TYPE_CHECKING:
    from ..index.store import Index
    from ..retrieve.read import ReadResult

QUERY = Param("query", "string", "What to look for.", required=True, positional=True, words=True,
              metavar="QUERY...", max_chars="query.max_chars")
NO_UPDATE = Param("no_update", "boolean", "Use the index as it is, without checking the files first.")
SCOPE = Param("scope", "string", "What to answer from: your notes and admitted memory (notes), plus extraction's "
              "claim, quote, hub and source notes (extractions), plus deposits waiting for review (pending), or "
              "everything (all). Default: the search.scope setting (notes).",
              enum=("notes", "extractions", "pending", "all"))
EXACT = Param("exact", "boolean", "Search for the words as typed: no word the notes lack is taken for a misspelling "
              "of one they hold.")
LOADING = "the embedding model is still loading"
# What people narrow a search to (retrieve/filters.py), the same on search, scan and context.
FILTERS = (
    Param("tag", "array", "Only notes with every one of these tags, their own or inherited (on the command "
          "line: comma-separated, or the option repeated)."),
    Param("folder", "string", "Only notes in this folder or whose file matches this glob, relative to the notes "
          "(projects, projects/*.org)."),
    Param("todo", "string", "Only entries in this TODO state (TODO, DONE, ...)."),
    Param("since", "string", "Only notes whose file changed since then: an ISO date or time, or a span back from "
          "now (7d, 12h, 2w)."),
    Param("until", "string", "Only notes whose file changed before then (a date counts to its end)."),
)


def scope_of(ctx: OpContext, args: dict[str, Any]):
    """The scope a call asked for, or the configured default."""
    from ..memory.store import pending_deposits
    from ..retrieve.scope import resolve

    from ..retrieve.filters import from_args

    return resolve(args["scope"], ctx.config, pending_deposits, from_args(args, ctx.root))


def report(ctx: OpContext, result, embedder) -> None:
    """A context's warnings on the call; while the model loads, that is the one reason for ranking by words.

    Without a model the search says "no embedding model configured", which is
    not true while the warm-up loads it: `query_embedder` has already warned.
    """
    if embedder is None and result.mode == "lexical":
        result.warnings = [w for w in result.warnings if not w.startswith("no embedding model configured")]
        if result.reason == "no embedding model configured":
            result.reason = LOADING
    for message in result.warnings:
        ctx.warn(message)
    corrected(ctx, result.corrected)


def corrected(ctx: OpContext, query: str | None) -> None:
    """Say how a mistyped query was read (its JSON carries it as "corrected" too)."""
    if query:
        ctx.warn(f"showing results for {query!r}")


def scan(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..retrieve.filters import from_args, within
    from ..retrieve.scan import scan as scan_notes

    filters = from_args(args, ctx.root)
    found = scan_notes(ctx.root, args["query"], limit=args["limit"], regex=args["regex"], count=True,
                       filters=filters)
    for message in found.warnings:
        ctx.warn(message)
    if not found.hits:
        ctx.warn(f"no headline, title or alias matches {args['query']!r}{within(filters)}")
    if found.matches is not None:
        option = "--limit" if ctx.surface == "cli" else "limit"
        ctx.warn(f"showing {len(found.hits)} of {found.matches} matches ({option} {args['limit']})")
    return [h.to_json() for h in found.hits]


SHOWN_OMITTED = 5  # a warning is a line: the first few left-out notes, the rest counted


def _omitted(omitted: list[dict]) -> str:
    left = ", ".join(f"{o['id']} ({o.get('title') or o['reason']}, ~{o['tokens']} tokens)"
                     if "tokens" in o else f"{o['id']} ({o['reason']})" for o in omitted[:SHOWN_OMITTED])
    more = f" and {len(omitted) - SHOWN_OMITTED} more (--json lists them)" if len(omitted) > SHOWN_OMITTED else ""
    return f"left out {len(omitted)} linked note(s): {left}{more}"


def read(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    """The notes found; unknown IDs are errors beside them (or the whole error when none is found).

    Without an index, IDs are found with ripgrep and none is built; titles and
    aliases are looked up in the index only, so a key that is neither an ID
    ripgrep finds nor a locator builds it (as a first search does) and is
    looked up again.
    """
    from ..org.units import is_locator

    index = ctx.lookup_index()
    result = _read(ctx, index, args)
    if index is None and any(not is_locator(key) for key in result.missing):
        try:
            ctx.refresh(embed=False)
        except (OrgkitError, OSError) as exc:  # a folder one may read and not write: IDs are all it has
            ctx.warn(f"titles and aliases are looked up in the index, and none can be built here: {exc}")
        else:
            result = _read(ctx, ctx.index, args)
    for message in result.warnings:
        ctx.warn(message)
    if result.missing and not result.docs:
        raise NotFound(f"unknown ID: {', '.join(result.missing)}")
    for node_id in result.missing:
        ctx.error(f"unknown ID: {node_id}")
    if result.omitted:
        ctx.warn(_omitted(result.omitted))
    return [d.to_json() for d in result.docs]


def _read(ctx: OpContext, index: Index | None, args: dict[str, Any]) -> ReadResult:
    """The call's keys read (IDs, locators, and with an index titles and aliases) at its depth and budget."""
    from ..retrieve.locate import by_title, index_locator
    from ..retrieve.read import read as read_notes

    ids = by_title(index, args["ids"]) if index is not None else args["ids"]
    return read_notes(ctx.root, ids, depth=args["depth"], budget=args["budget"],
                      locator=index_locator(index) if index is not None else None,
                      texts=index.stored_texts() if index is not None else None)


def recent(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..memory.store import pending_deposits
    from ..retrieve.filters import from_args, within
    from ..retrieve.recent import recent as changed

    filters = from_args(args, ctx.root)
    found = changed(ctx.root, limit=args["limit"], filters=filters, hidden=pending_deposits(ctx.config))
    if not found:
        ctx.warn(f"no note file{within(filters)}")
    return found


def search(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..retrieve.filters import within
    from ..retrieve.search import search as search_index

    mode = args["mode"]
    embedder = None if mode == "lexical" else ctx.query_embedder()
    if mode != "lexical" and embedder is None:
        mode = "lexical"
    if not (args["no_update"] and ctx.index.exists()):
        ctx.refresh(embed=embedder is not None)
    min_score = args["min_score"] if args["min_score"] is not None else ctx.config["search.min_score"]
    scope = scope_of(ctx, args)
    found = search_index(ctx.index, args["query"], mode=mode, limit=args["limit"], embedder=embedder,
                         cache=ctx.cache, min_score=min_score, scope=scope, exact=args["exact"])
    for message in found.warnings:
        ctx.warn(message)
    corrected(ctx, found.corrected)
    if not found.hits:
        ctx.warn(f"nothing in the notes matches {args['query']!r}{within(scope.filters)}")
    return [h.to_json() for h in found.hits]


def context(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..retrieve.context import context as gather

    embedder = ctx.query_embedder()
    if not (args["no_update"] and ctx.index.exists()):
        ctx.refresh(embed=embedder is not None)
    result = gather(ctx.index, args["query"], budget=args["budget"], embedder=embedder, cache=ctx.cache,
                    scope=scope_of(ctx, args), kept=ctx.kept, exact=args["exact"])
    report(ctx, result, embedder)
    return result.to_json()


declare(Op("scan", "Find headlines, file titles and node aliases matching every word of QUERY (case-insensitive; "
           "links count by their descriptions).", scan,
           params=(QUERY,
                   Param("limit", "integer", "At most N hits.", minimum=1),
                   Param("regex", "boolean", "QUERY is one regular expression."), *FILTERS),
           result="[{id, title, file, line, level, olp, locator?}]", role="reader", rate="read"))
declare(Op("read", "The org text of nodes by ID, exact title or alias (or of files and headings by locator), and "
           "of the notes they link to, within a token budget.", read,
           params=(Param("ids", "array", "Node IDs, exact titles or aliases, or locators of files and headings "
                         "without an ID (FILE.org, FILE.org::*Heading, FILE.org::LINE, relative to the notes).",
                         required=True, positional=True, metavar="ID..."),
                   Param("depth", "integer", "Follow id links this many hops (breadth-first).", default=0,
                         minimum=0),
                   Param("budget", "integer", "Stop adding linked notes past this many tokens (~4 characters each).",
                         minimum=1)),
           result="[{id, title, file, line, level, content, links, depth, via, duplicates, locator?, olp?}]",
           role="reader"))
declare(Op("recent", "The notes changed lately, newest first (by their files' modification time).", recent,
           params=(Param("limit", "integer", "At most N notes.", default=10, minimum=1),
                   FILTERS[1], FILTERS[3], FILTERS[4]),
           result="[{id, title, file, modified, locator?}]", role="reader"))
declare(Op("search", "Find notes by meaning and words, best first.", search,
           params=(QUERY,
                   Param("limit", "integer", "At most N results.", default=10, minimum=1),
                   Param("mode", "string", "Rank by meaning and words, meaning only, or words only.",
                         default="hybrid", enum=("hybrid", "dense", "lexical")),
                   Param("min_score", "number", "Leave out hits whose relevance is below this (default: the "
                         "config key search.min_score, 0: keep all, marking those below the floor not relevant).",
                         minimum=0),
                   SCOPE, EXACT, *FILTERS, NO_UPDATE),
           result="[{id, title, file, line, level, score, snippet, mode, relevance, relevant, corrected?, locator?, "
                  "olp?}]", role="reader", rate="read"))
declare(Op("context", "Gather the notes that best answer QUERY, and what they link to, within a budget.", context,
           params=(QUERY,
                   Param("budget", "integer", "Tokens of note text to gather (~4 characters each).", default=4000,
                         minimum=1),
                   SCOPE, EXACT, *FILTERS, NO_UPDATE),
           result="{query, budget, tokens, included: [{id, title, file, line, level, content, links, tokens, locator?, "
                  "excerpt, whole_tokens?, passages?: [{line, end_line, olp, tokens}], ...}], omitted, warnings, "
                  "mode, reason, corrected?}", role="reader", rate="read"))

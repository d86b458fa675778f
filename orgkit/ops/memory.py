"""deposit, deposits, review_*, recall: the agent memory flow as operations.

A one-shot command (the shell) waits for the librarian after a deposit; a
server (`serve`, MCP) answers at once with `{id, path, status}` and runs it in
the background. Unfinished librarian work is picked up by the worker (a
server's start, a deposit) or on request (`librarian`), never by a listing:
listings only read, repair what a crash left half done, and say how many
deposits wait (see `memory.worker`). Review decisions are offered over MCP only when
`mcp.allow_review` is on: agents deposit and recall, people decide.
"""

from __future__ import annotations

from typing import Any

from ..roles import token_of
from . import declare
from .context import OpContext
from .retrieve import EXACT, SCOPE, report, scope_of
from .spec import Op, Param, ParamError

REVIEW_SETTING = "mcp.allow_review"


def _store(ctx: OpContext, feedback: bool = False):
    """The memory store; with `feedback` (--use-extraction-feedback), a librarian run here gets the guidance."""
    from dataclasses import replace

    from ..memory.store import Store

    cfg = ctx.config
    return Store(replace(cfg, values={**cfg.values, "feedback.use_guidance": True}) if feedback else cfg)


def _actor(ctx: OpContext) -> str:
    """Who acts: the team server's verified caller, else the login user (and the surface)."""
    from ..memory.store import actor_name

    token = token_of(ctx.identity)
    if token is not None:
        return token.name
    user = actor_name()
    return user if ctx.surface == "cli" else f"{user} via {ctx.surface}"


def _caller(ctx: OpContext, given: str | None) -> str:
    """Who recalls: a request's `caller` is believed only where no verified identity is known."""
    return _actor(ctx) if token_of(ctx.identity) is not None or not given else given


def _catch_up(ctx: OpContext, store, only: str | None = None) -> None:
    """Pick up unfinished work: inline for the shell, in the background for a server."""
    from ..memory import worker

    if ctx.warm:
        _repaired(ctx, store)
        if ctx.may_work_in_background():
            ctx.process.catch_ups.start(ctx.config, ctx.embedder, ctx.held.memo)
        else:
            ctx.hand_over()  # a worker of several that does not lead: the one that does runs it
        return
    for message in worker.catch_up(store, only=only, embedder=ctx.embedder, memo=ctx.held.memo).messages:
        ctx.warn(message)


def deposit(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory.deposit import deposit as write, get

    body = args["body"]
    if (body is None) == (args["body_file"] is None):
        raise ParamError("give exactly one of 'body' and 'body_file'")
    if body is None:  # the command line only (the parameter is offered nowhere else)
        body = _body_file(ctx, args["body_file"])
    meta = {}
    for pair in args["meta"] or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ParamError(f"meta {pair!r}: give KEY=VALUE")
        meta[key.strip()] = value.strip()
    with _store(ctx, args["use_extraction_feedback"]) as store:
        dep = write(store, title=args["title"], body=body, lane=args["lane"], path=args["path"], meta=meta,
                    supersedes=args["supersedes"], via=ctx.surface, actor=_actor(ctx))
        if not args["no_process"]:
            _catch_up(ctx, store, only=dep.id)
            dep = get(store, dep.id)
    return dep.to_json()


def _body_file(ctx: OpContext, name: str) -> str:
    """The text of a body file, read up to the size limit and one byte more (`/dev/zero` is no trap)."""
    from .boundary import read_limited

    limit = ctx.config["deposit.max_bytes"]
    try:
        with ctx.path(name).open("rb") as handle:
            return read_limited(handle, limit, f"body_file {name}", "deposit.max_bytes")
    except OSError as exc:
        raise ParamError(f"body_file {name}: cannot read ({exc.strerror})") from None


def _repaired(ctx: OpContext, store) -> None:
    """Repair what a crash left half done, saying so, and on a server say when its background
    librarian failed."""
    from ..memory import worker

    for message in worker.repair(store):
        ctx.warn(message)
    if ctx.warm:
        failed = ctx.process.catch_ups.last_error(ctx.config)
        if failed:
            ctx.warn(f"the background librarian failed: {failed}")


def _listed(ctx: OpContext, store) -> None:
    """What a listing does before it reads: repair interrupted writes, and say what waits for the librarian.

    No model is called and no work is started here: a dead or slow endpoint
    never slows a listing. A server's listing also says when its background
    librarian failed.
    """
    from ..memory import worker

    _repaired(ctx, store)
    waiting = worker.waiting(store)
    if waiting:
        how = "the server's worker picks them up" if ctx.warm else "`orgkit librarian` runs it now"
        ctx.warn(f"{waiting} deposit{'s' if waiting != 1 else ''} wait{'' if waiting != 1 else 's'} "
                 f"for the librarian ({how})")


def deposits(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..memory.deposit import get, listing
    from ..memory.stage import stages

    with _store(ctx) as store:
        _listed(ctx, store)
        found = [get(store, args["id"])] if args["id"] else listing(store)
        where = stages(store)
        return [d.to_json() | {"stage": where.get(d.id, d.status)} for d in found]


def review_list(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..memory.deposit import deposit_facts
    from ..memory.proposals import listing
    from ..memory.review import show
    from ..memory.shown import shown_evidence

    with _store(ctx) as store:
        _listed(ctx, store)
        rows = []
        notes = _note_reader(ctx)
        found = listing(store, None if args["all"] else "pending")
        deposits = deposit_facts(store, {p.deposit for p in found})
        named = list(dict.fromkeys(n for p in found for n in p.notes()))
        titles = {i: d.title for i, d in notes(named).items()} if named and ctx.config.has_notes else {}
        for p in found:
            dep = deposits.get(p.deposit, {})
            row = p.to_json() | {"summary": p.summary(titles), "deposit_title": dep.get("title"),
                                 "deposit_lane": dep.get("lane"), "deposit_stage": dep.get("stage"),
                                 "target_title": dep.get("title") if p.target == p.deposit else titles.get(p.target),
                                 "dest_title": titles.get(p.payload.get("dest"))}
            if args["diff"]:
                shown = show(store, p.id)
                row |= {"diff": shown.diff, "error": shown.error,
                        "evidence": shown_evidence(p.evidence, p.deposit, notes)}
            rows.append(row)
        return rows


def librarian(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory import worker

    with _store(ctx, args["use_extraction_feedback"]) as store:
        only = None
        if args["id"]:
            from ..memory.deposit import get

            only = get(store, args["id"]).id
        _catch_up(ctx, store, only=only)
        return {"started": ctx.warm, "waiting": worker.waiting(store)}


def _note_reader(ctx: OpContext) -> Any:
    from ..memory.shown import reader
    from ..retrieve.locate import index_locator

    index = ctx.lookup_index()
    return reader(ctx.root, index_locator(index) if index is not None else None,
                  index.stored_texts() if index is not None else None)


def review_show(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory.review import show

    with _store(ctx) as store:
        shown = show(store, args["id"])
        return shown.to_json() | {"summary": shown.proposal.summary()}


def review_accept(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory.review import accept

    with _store(ctx) as store:
        batch = accept(store, args["ids"], _actor(ctx), why=args["why"])
    return {"batch": batch, "accepted": args["ids"]}


def review_edit(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory.proposals import EDITABLE, get
    from ..memory.review import accept, edit_in_editor

    with _store(ctx) as store:
        p = get(store, args["id"])
        field = EDITABLE.get(p.kind)
        if field is None:
            raise ParamError(f"a {p.kind} proposal has nothing to edit; accept or reject it")
        text = args["text"]
        if text is None:
            if ctx.warm:
                raise ParamError("give the edited 'text' (a server cannot open an editor)")
            text = edit_in_editor(str(p.payload.get(field, "")))
        payload = p.payload | {field: text if field in ("body", "text") else text.strip()}
        batch = accept(store, [p.id], _actor(ctx), edited={p.id: payload}, why=args["why"])
    return {"batch": batch, "accepted": [p.id], "payload": payload}


def review_reject(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory.review import reject

    with _store(ctx) as store:
        batch = reject(store, args["ids"], _actor(ctx), why=args["why"])
    return {"batch": batch, "rejected": args["ids"]}


def review_undo(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory.review import undo

    with _store(ctx) as store:
        batch = undo(store, args["batch"], _actor(ctx), why=args["why"])
    return {"batch": batch, "undoes": args["batch"]}


def review_batches(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..memory.review import batches

    with _store(ctx) as store:
        return batches(store)


def review_trail(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..memory.trail import trail

    with _store(ctx) as store:
        return trail(store, args["limit"])


def recall(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..memory.recall import recall as run

    embedder = ctx.query_embedder()
    ctx.refresh(embed=embedder is not None)
    with _store(ctx) as store:
        result = run(store, args["query"], budget=args["budget"], caller=_caller(ctx, args["caller"]),
                     embedder=embedder, index=ctx.index, cache=ctx.cache, scope=scope_of(ctx, args),
                     kept=ctx.kept, exact=args["exact"])
    report(ctx, result, embedder)
    return result.to_json()


WHY = Param("why", "string", "Why (kept with the decision).")
FEEDBACK = Param("use_extraction_feedback", "boolean", "Add the guidance file's bullets for the librarian (see "
                 "`orgkit evolve`) to its prompt, for a librarian run made by this call.")
IDS = Param("ids", "array", "Proposal IDs (a unique prefix will do).", required=True, positional=True, metavar="ID...")

declare(Op("deposit", "Deposit a finding as a new note (never replacing one); the librarian then proposes how it "
           "fits the notes, for review.", deposit,
           params=(Param("title", "string", "The finding's title.", required=True),
                   Param("body", "string", "The finding's text ('-' on the command line reads stdin).", stdin=True,
                         max_bytes="deposit.max_bytes"),
                   Param("body_file", "path", "Read the text from this file.", cli_only=True),
                   Param("lane", "string", "Who deposits.", default="agent", enum=("agent", "human"),
                         roles=(("human", "reviewer"),)),
                   Param("path", "string", "Where the note goes, relative to the notes dir "
                         "(default deposits/STAMP-slug.org).", metavar="REL"),
                   Param("meta", "array", "Properties for the note, KEY=VALUE (comma-separated on the command "
                         "line, or the option repeated).", metavar="KEY=VALUE,..."),
                   Param("supersedes", "string", "The deposit this one corrects.", metavar="ID"),
                   Param("no_process", "boolean", "Do not run the librarian now."),
                   FEEDBACK),
           result="{id, path, title, lane, status, via, actor, created, meta, supersedes, superseded_by, error, "
                  "model}", writes=True, role="agent", rate="deposit"))
declare(Op("deposits", "Each deposit and the stage it is in: pending, processing or failed (the librarian's), "
           "refused (its note is no longer a node), in-review, accepted, rejected (its note removed, or "
           "every proposal turned down), superseded or nothing-proposed; `status` keeps how far the librarian "
           "got (proposed, or no-model when it ran without a model). A listing never runs the librarian: "
           "it says how many deposits wait for it.",
           deposits, params=(Param("id", "string", "One deposit.", positional=True, metavar="[ID]"),),
           result="[{id, path, title, lane, status, stage, error, model, ...}]", writes=True, role="agent"))
declare(Op("librarian", "Run the librarian now on the deposits waiting for it (pending, failed, or left "
           "processing by a stopped process), take in notes of watched folders and admit by policy; a server "
           "starts the run in the background. `serve`, `mcp` and the team server do this on their own.",
           librarian, params=(Param("id", "string", "Only this deposit.", positional=True, metavar="[ID]"),
                              FEEDBACK),
           result="{started, waiting}", writes=True, role="agent"))
declare(Op("review_list", "Proposals waiting for review, oldest deposit first.", review_list,
           params=(Param("all", "boolean", "Every proposal, decided ones too."),
                   Param("diff", "boolean", "Include the diff each would make.")),
           result="[{id, deposit, kind, target, payload, chunks, evidence, status, reason, summary, deposit_title, "
                  "deposit_lane, deposit_stage, target_title, dest_title, diff?}]",
           writes=True, cli=("review", "list"), role="reviewer"))
declare(Op("review_show", "A proposal and the unified diff accepting it would make to the notes.", review_show,
           params=(Param("id", "string", "The proposal.", required=True, positional=True, metavar="ID"),),
           result="{id, kind, payload, chunks, evidence, status, reason, summary, diff, error}",
           cli=("review", "show"), role="reviewer"))
declare(Op("review_accept", "Accept proposals as one batch (`review undo BATCH` reverts it).", review_accept,
           params=(IDS, WHY), result="{batch, accepted}", writes=True, cli=("review", "accept"),
           mcp_setting=REVIEW_SETTING, role="reviewer", destructive=True))
declare(Op("review_edit", "Edit a proposal ($EDITOR, or the given text), then accept it as edited.", review_edit,
           params=(Param("id", "string", "The proposal.", required=True, positional=True, metavar="ID"),
                   Param("text", "string", "The edited text (default: open $EDITOR).", stdin=True,
                         max_bytes="deposit.max_bytes"), WHY),
           result="{batch, accepted, payload}", writes=True, cli=("review", "edit"), mcp_setting=REVIEW_SETTING,
           role="reviewer", destructive=True))
declare(Op("review_reject", "Reject proposals as one batch (rejecting a deposit's admit removes its note).",
           review_reject, params=(IDS, WHY), result="{batch, rejected}", writes=True, cli=("review", "reject"),
           mcp_setting=REVIEW_SETTING, role="reviewer", destructive=True))
declare(Op("review_undo", "Revert a batch of decisions, if none of its files was edited since.", review_undo,
           params=(Param("batch", "string", "The batch.", required=True, positional=True, metavar="BATCH"), WHY),
           result="{batch, undoes}", writes=True, cli=("review", "undo"), mcp_setting=REVIEW_SETTING, role="reviewer",
           destructive=True))
declare(Op("review_batches", "Every batch of decisions, oldest first (the IDs `review undo` takes).",
           review_batches, result="[{id, action, state, actor, at, files, proposals, deposits: [{id, title}], undoes, "
                           "undone_by, title}]",
           cli=("review", "batches"), role="reviewer"))
declare(Op("review_trail", "The audit trail, newest first: deposits, decisions and recalls, with who made them.",
           review_trail, params=(Param("limit", "integer", "How many records.", default=50, minimum=1,
                                       maximum=10000),),
           result="[{seq, at, actor, action, subject, detail}]", cli=("review", "trail"), role="reviewer"))
declare(Op("recall", "Context for a task: the best notes within a budget, each with its provenance (deposit, "
           "lane, approver, evidence); the call is audited.", recall,
           params=(Param("query", "string", "What the task is about.", required=True, positional=True, words=True,
                         metavar="QUERY...", max_chars="query.max_chars"),
                   Param("budget", "integer", "Tokens of note text to gather (~4 characters each).", default=4000,
                         minimum=1),
                   Param("caller", "string", "Who asks (kept in the audit log; default: the user)."), SCOPE, EXACT),
           result="{query, budget, tokens, included: [{id, title, file, content, excerpt, passages?, provenance, "
                  "...}], omitted, warnings, mode, reason, corrected?}", writes=True, writes_notes=False, role="reader",
           rate="read"))

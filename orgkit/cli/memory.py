"""`orgkit deposit`, `deposits`, `review` and `recall`: the agent memory flow."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import click

from .common import emit, handle_errors, json_option, notes_option, state_dir_option, warn


def _open(notes_dir: Path | None, state_dir: Path | None):
    from ..config import load
    from ..memory.store import Store

    return Store(load(notes_dir, {"state_dir": state_dir}))


def _catch_up(store, **kwargs) -> None:
    from ..memory.worker import catch_up

    for message in catch_up(store, **kwargs).messages:
        warn(message)


def _meta(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise click.UsageError(f"--meta {pair!r}: give KEY=VALUE")
        out[key] = value
    return out


def _render_deposits(rows: list[dict]) -> str:
    return "\n".join(f"{r['id']}  {r['status']:<10} {r['lane']:<6} {r['path']}"
                     + (f"\n    error: {r['error']}" if r["error"] else "") for r in rows) or "no deposits"


def _render_proposals(rows: list[dict]) -> str:
    return "\n".join(f"{r['id']}  {r['kind']:<6} {r['summary']}  (deposit {r['deposit']}, chunks "
                     f"{','.join(map(str, r['chunks'])) or '-'})"
                     + (f"\n    {r['reason']}" if r["reason"] else "") for r in rows) or "nothing to review"


def _proposal_json(p) -> dict:
    return p.to_json() | {"summary": p.summary()}


def register(main: click.Group) -> None:
    @main.command("deposit")
    @click.option("--title", required=True, help="The finding's title.")
    @click.option("--body", default=None, help="The finding's text.")
    @click.option("--body-file", type=click.File("r", encoding="utf-8"), default=None,
                  help="Read the text from FILE ('-': stdin).")
    @click.argument("stdin", required=False, metavar="[-]")
    @click.option("--lane", default="agent", show_default=True, help="agent or human.")
    @click.option("--path", "rel", default=None, metavar="REL",
                  help="Where the note goes, relative to the notes dir (default deposits/STAMP-slug.org).")
    @click.option("--meta", multiple=True, metavar="KEY=VALUE", help="A property for the note (repeatable).")
    @click.option("--supersedes", default=None, metavar="ID", help="The deposit this one corrects.")
    @click.option("--no-process", is_flag=True, help="Do not run the librarian now.")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def deposit_command(title: str, body: str | None, body_file, stdin: str | None, lane: str,
                        rel: str | None, meta: tuple[str, ...], supersedes: str | None, no_process: bool,
                        notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """Deposit a finding as a new note; the librarian then proposes how it fits."""
        from ..memory.deposit import deposit, get
        from ..memory.store import actor_name

        if stdin not in (None, "-"):
            raise click.UsageError(f"unexpected argument {stdin!r} (give '-' to read the body from stdin)")
        given = [x for x in (body, body_file, stdin) if x is not None]
        if len(given) != 1:
            raise click.UsageError("give exactly one of --body, --body-file and -")
        text = body if body is not None else body_file.read() if body_file is not None else sys.stdin.read()
        with _open(notes_dir, state_dir) as store:
            dep = deposit(store, title=title, body=text, lane=lane, path=rel, meta=_meta(meta),
                          supersedes=supersedes, via="cli", actor=actor_name())
            if not no_process:
                _catch_up(store, only=dep.id)
                dep = get(store, dep.id)
            emit(dep.to_json(), as_json, lambda d: f"{d['path']}  [{d['id']}]  {d['status']}")

    @main.command("deposits")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def deposits_command(notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """Each deposit and its stage (unfinished ones are picked up first)."""
        from ..memory.deposit import listing

        with _open(notes_dir, state_dir) as store:
            _catch_up(store)
            emit([d.to_json() for d in listing(store)], as_json, _render_deposits)

    @main.group("review", invoke_without_command=True)
    @notes_option
    @state_dir_option
    @json_option
    @click.pass_context
    @handle_errors
    def review_group(ctx: click.Context, notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """Pending proposals: list, show (a diff), accept, edit, reject, undo."""
        ctx.obj = {"notes_dir": notes_dir, "state_dir": state_dir, "json": as_json}
        if ctx.invoked_subcommand is None:
            ctx.invoke(review_group.commands["list"])

    def review_command(name: str, *params: click.Parameter) -> Callable:
        """A review subcommand; --notes, --state-dir and --json work here or on the group."""
        def wrap(func: Callable) -> Callable:
            def callback(notes_dir: Path | None, state_dir: Path | None, as_json: bool, **kwargs) -> None:
                parent = click.get_current_context().find_object(dict) or {}
                notes = notes_dir or parent.get("notes_dir")
                with _open(notes, state_dir or parent.get("state_dir")) as store:
                    func(store, as_json or parent.get("json", False), **kwargs)

            command = click.Command(name, callback=handle_errors(callback), help=func.__doc__, params=[
                *params,
                click.Option(["--notes", "notes_dir"], type=click.Path(file_okay=False, path_type=Path),
                             help="Notes directory (default: $ORGKIT_NOTES, else ./notes)."),
                click.Option(["--state-dir", "state_dir"], type=click.Path(file_okay=False, path_type=Path),
                             envvar="ORGKIT_STATE_DIR", help="Where the index lives."),
                click.Option(["--json", "as_json"], is_flag=True, help="Print one JSON document.")])
            review_group.add_command(command)
            return func
        return wrap

    why = click.Option(["--why"], default=None, help="Why (kept with the decision).")

    @review_command("list", click.Option(["--all", "all_"], is_flag=True, help="Every proposal, decided too."))
    def review_list(store, as_json: bool, all_: bool = False) -> None:
        """Pending proposals, oldest deposit first."""
        from ..memory.proposals import listing

        _catch_up(store)
        rows = [_proposal_json(p) for p in listing(store, None if all_ else "pending")]
        emit(rows, as_json, _render_proposals)

    @review_command("show", click.Argument(["proposal"], metavar="ID"))
    def review_show(store, as_json: bool, proposal: str) -> None:
        """The proposal and the unified diff accepting it makes."""
        from ..memory.review import show

        shown = show(store, proposal)
        if as_json:
            emit(shown.to_json() | {"summary": shown.proposal.summary()}, True, str)
            return
        p = shown.proposal
        click.echo(f"{p.id}  {p.kind}  {p.status}: {p.summary()}\n  deposit {p.deposit}, chunks "
                   f"{','.join(map(str, p.chunks)) or '-'}, by {p.model}"
                   + (f"\n  {p.reason}" if p.reason else ""))
        if shown.error:
            click.echo(f"  cannot apply now: {shown.error}")
        click.echo(shown.diff, nl=False)

    @review_command("accept", click.Argument(["proposals"], nargs=-1, required=True, metavar="ID..."), why)
    def review_accept(store, as_json: bool, proposals: tuple[str, ...], why: str | None) -> None:
        """Accept proposals as one batch (undo it with `orgkit review undo BATCH`)."""
        from ..memory.review import accept
        from ..memory.store import actor_name

        batch = accept(store, list(proposals), actor_name(), why=why)
        emit({"batch": batch, "accepted": list(proposals)}, as_json,
             lambda r: f"accepted {len(proposals)} proposal(s) in batch {r['batch']}")

    @review_command("reject", click.Argument(["proposals"], nargs=-1, required=True, metavar="ID..."), why)
    def review_reject(store, as_json: bool, proposals: tuple[str, ...], why: str | None) -> None:
        """Reject proposals as one batch (rejecting a deposit's `admit` removes its note)."""
        from ..memory.review import reject
        from ..memory.store import actor_name

        batch = reject(store, list(proposals), actor_name(), why=why)
        emit({"batch": batch, "rejected": list(proposals)}, as_json,
             lambda r: f"rejected {len(proposals)} proposal(s) in batch {r['batch']}")

    @review_command("edit", click.Argument(["proposal"], metavar="ID"), why)
    def review_edit(store, as_json: bool, proposal: str, why: str | None) -> None:
        """Edit a proposal in $EDITOR, then accept it as edited."""
        from ..memory.proposals import EDITABLE, get
        from ..memory.review import accept
        from ..memory.store import actor_name

        p = get(store, proposal)
        field = EDITABLE.get(p.kind)
        if field is None:
            raise click.UsageError(f"a {p.kind} proposal has nothing to edit; accept or reject it")
        edited = click.edit(str(p.payload.get(field, "")), extension=".org", require_save=True)
        if edited is None:
            raise click.ClickException("not saved: nothing accepted")
        payload = p.payload | {field: edited if field == "body" else edited.strip()}
        batch = accept(store, [p.id], actor_name(), edited={p.id: payload}, why=why)
        emit({"batch": batch, "accepted": [p.id], "payload": payload}, as_json,
             lambda r: f"accepted {p.id} as edited in batch {r['batch']}")

    @review_command("undo", click.Argument(["batch"], metavar="BATCH"), why)
    def review_undo(store, as_json: bool, batch: str, why: str | None) -> None:
        """Revert a batch of decisions, if its files were not edited since."""
        from ..memory.review import undo
        from ..memory.store import actor_name

        done = undo(store, batch, actor_name(), why=why)
        emit({"batch": done, "undoes": batch}, as_json, lambda r: f"undone in batch {r['batch']}")

    @review_command("batches")
    def review_batches(store, as_json: bool) -> None:
        """Every batch of decisions, oldest first (the IDs `undo` takes)."""
        from ..memory.review import batches

        emit(batches(store), as_json, lambda rs: "\n".join(
            f"{r['id']}  {r['action']:<6} {r['state']:<11} {r['actor']} {r['at']}  {len(r['proposals'])} "
            f"proposal(s)" + (f", undone by {r['undone_by']}" if r["undone_by"] else "") for r in rs)
            or "no batches")

    @main.command("recall")
    @click.argument("query", nargs=-1, required=True)
    @click.option("--budget", type=click.IntRange(min=1), default=4000, show_default=True,
                  help="Tokens of note text to gather (~4 characters each).")
    @click.option("--caller", default=None, help="Who asks (kept in the audit log; default: the user).")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def recall_command(query: tuple[str, ...], budget: int, caller: str | None, notes_dir: Path | None,
                       state_dir: Path | None, as_json: bool) -> None:
        """Context for a task: the best notes within a budget, each with its provenance."""
        from ..embed import Embedder
        from ..memory.recall import recall
        from ..memory.store import actor_name

        with _open(notes_dir, state_dir) as store:
            result = recall(store, " ".join(query), budget=budget, caller=actor_name(caller),
                            embedder=Embedder.from_env())
        for message in result.warnings:
            warn(message)
        emit(result.to_json(), as_json, _render_recall)


def _render_recall(doc: dict) -> str:
    parts = []
    for d in doc["included"]:
        prov = d["provenance"]
        origin = prov["origin"]
        if prov.get("deposit"):
            origin += (f" {prov['deposit']} ({prov.get('lane')}), approved by {prov.get('approved_by')} "
                       f"at {prov.get('approved_at')}")
        parts.append(f"# {d['title']}  [{d['id']}]  ({d['file']}:{d['line']}, ~{d['tokens']} tokens)\n"
                     f"# from: {origin}\n{d['content'].rstrip()}\n")
    return "\n".join(parts)

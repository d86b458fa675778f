"""new, id_add: the operations that write notes."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .spec import Op, Param, ParamError


def new(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..edit import new_note

    index = ctx.lookup_index() if args["link"] else None
    locator = None
    if index is not None:
        from ..retrieve.locate import index_locator

        locator = index_locator(index)
    return new_note(ctx.root, args["title"], tags=args["tags"] or [], body=args["body"], link=args["link"],
                    locator=locator).to_json()


def id_add(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    """IDs for one heading, or in bulk for a file's or a folder's files and headings (the notes
    dir without a path); a dry run says which would get one and writes nothing."""
    from ..edit import add_ids_to_file, add_ids_to_folder
    from ..locator import note_ids, run_note_ids

    target = ctx.path(args["file"]) if args["file"] else ctx.root
    dry = args["dry_run"]
    if not target.is_dir() or target.suffix == ".org":  # a note's name: the writer refuses a folder
        added = add_ids_to_file(target, line=args["line"], ids=note_ids(ctx.root), headings=args["line"] is not None
                                or args["all"], top=args["files"], dry_run=dry)
        return [_given(a, args["file"], dry) for a in added]
    if args["line"] is not None:
        raise ParamError(f"'line' names a heading of a file; {target} is a folder")
    done, failed = add_ids_to_folder(target, headings=args["all"], top=args["files"], ids=run_note_ids(ctx.root),
                                     dry_run=dry)
    for message in failed:
        ctx.error(message)
    return [_given(a, f.file, dry) for f in done for a in f.added]


def _given(added, file: str, dry: bool) -> dict:
    """One entry that got an ID (a dry run's: none yet)."""
    return {"id": None if dry else added.id, "file": file, "line": added.line, "title": added.title}


def _one_target(args: dict[str, Any]) -> None:
    if (args["line"] is None) == (not (args["all"] or args["files"])):
        raise ParamError("give exactly one of 'line' and 'all' or 'files' (or both of those)")


declare(Op("new", "Create a note file with a fresh ID, named as org-roam names notes (never overwrites).", new,
           params=(Param("title", "string", "The note's title.", required=True, positional=True, metavar="TITLE"),
                   Param("tags", "array", "File tags (on the command line: comma-separated, e.g. a,b, or the "
                         "option repeated)."),
                   Param("body", "string", "The note's text ('-' on the command line reads it from stdin).",
                         default="", stdin=True, max_bytes="deposit.max_bytes"),
                   Param("link", "string", "End the note with a link to this node ID.", metavar="ID")),
           result="{id, file, title}", writes=True, role="admin"))
declare(Op("id_add", "Give headings of FILE an ID in a property drawer, as Emacs would; in bulk, the files and "
           "headings of a folder (default: the notes dir).", id_add,
           params=(Param("file", "path", "The org file, or a folder of them (default: the notes dir).",
                         positional=True, metavar="[FILE|FOLDER]"),
                   Param("line", "integer", "The heading at (or above) this line; before the first heading: the file.",
                         minimum=1),
                   Param("all", "boolean", "Every heading without an ID."),
                   Param("files", "boolean", "Every file without an ID (in its top property drawer)."),
                   Param("dry_run", "boolean", "Say which entries would get an ID; write nothing.")),
           result="[{id, file, line, title}]", writes=True, cli=("id", "add"), mcp=False,
           check=_one_target, role="admin"))

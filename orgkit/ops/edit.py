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
    from ..edit import add_ids_to_file
    from ..locator import note_ids

    added = add_ids_to_file(ctx.path(args["file"]), line=args["line"], ids=note_ids(ctx.root))
    return [{"id": a.id, "line": a.line, "title": a.title} for a in added]


def _one_target(args: dict[str, Any]) -> None:
    if (args["line"] is None) == (not args["all"]):
        raise ParamError("give exactly one of 'line' and 'all'")


declare(Op("new", "Create a note file with a fresh ID, named as org-roam names notes (never overwrites).", new,
           params=(Param("title", "string", "The note's title.", required=True, positional=True, metavar="TITLE"),
                   Param("tags", "array", "File tags (on the command line: comma-separated, e.g. a,b)."),
                   Param("body", "string", "The note's text ('-' on the command line reads it from stdin).",
                         default="", stdin=True, max_bytes="deposit.max_bytes"),
                   Param("link", "string", "End the note with a link to this node ID.", metavar="ID")),
           result="{id, file, title}", writes=True, role="admin"))
declare(Op("id_add", "Give headings of FILE an ID in a property drawer, as Emacs would.", id_add,
           params=(Param("file", "path", "The org file.", required=True, positional=True, metavar="FILE"),
                   Param("line", "integer", "The heading at (or above) this line; before the first heading: the file.",
                         minimum=1),
                   Param("all", "boolean", "Every heading without an ID.")),
           result="[{id, line, title}]", writes=True, cli=("id", "add"), notes=False, mcp=False, check=_one_target,
           role="admin"))

"""`orgkit new` and `orgkit id add`: the commands that write notes."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..edit import add_ids_to_file, new_note
from .common import emit, handle_errors, json_option, notes_option, resolve_notes_dir


def register(main: click.Group) -> None:
    @main.command("new")
    @click.argument("title")
    @click.option("--tags", default="", help="Comma-separated file tags, e.g. a,b.")
    @click.option("--body", default="", help="The note's text; '-' reads it from stdin.")
    @click.option("--link", "link", metavar="ID", default=None, help="End the note with a link to ID.")
    @notes_option
    @json_option
    @handle_errors
    def new_command(title: str, tags: str, body: str, link: str | None,
                    notes_dir: Path | None, as_json: bool) -> None:
        """Create a note file with a fresh ID (never overwrites)."""
        text = sys.stdin.read() if body == "-" else body
        note = new_note(resolve_notes_dir(notes_dir), title,
                        tags=[t.strip() for t in tags.split(",") if t.strip()],
                        body=text, link=link)
        emit(note.to_json(), as_json, lambda n: f"{n['file']}  [{n['id']}]")

    @main.group("id")
    def id_group() -> None:
        """Manage node IDs."""

    @id_group.command("add")
    @click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--line", type=click.IntRange(min=1), default=None,
                  help="The heading at (or above) this line; before the first heading: the file.")
    @click.option("--all", "all_", is_flag=True, help="Every heading without an ID.")
    @json_option
    @handle_errors
    def id_add(file: Path, line: int | None, all_: bool, as_json: bool) -> None:
        """Give headings of FILE an ID in a property drawer, as Emacs would."""
        if (line is None) == (not all_):
            raise click.UsageError("give exactly one of --line N and --all")
        added = add_ids_to_file(file, line=line)
        rows = [{"id": a.id, "line": a.line, "title": a.title} for a in added]
        emit(rows, as_json, lambda rs: "\n".join(f"{file}:{r['line']}: {r['title']}  [{r['id']}]"
                                                  for r in rs) or "nothing to do: every entry has an ID")

"""Creating notes and giving headings IDs: the writes orgkit makes to notes.

Every write goes through the one note writer (`orgkit.org.write`): locked,
atomic, refusing to clobber a file that changed since it was read, so these
are safe while Emacs or another orgkit has the file open.

A new note's title is one line: control characters (newlines, tabs) and line
separators in it are folded to spaces, so a title can never add headings or
properties to the file; body lines org would read as structure are
comma-escaped (`org.escape`). Its file name is org-roam's `YYYYMMDDHHMMSS-slug.org`,
the slug cut (at a character boundary) to keep the name within the file
system's limit; when the name is taken, `-2`, `-3`... is added before `.org`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Sequence

from .errors import NotFound, OrgkitError
from .locator import Locator, note_ids, rg_locator
from .org import decode_org
from .org import syntax as sx
from .org.escape import escape_lines, link_description, one_line
from .org.ids import Added, add_ids, id_line, new_id
from .org.names import fit_name, slugify
from .org.text import UndecodableFile
from .org.unique import NoteIds
from .org.write import AlreadyExists, atomic_write, update_note
from .vault import iter_org_files, read_org_file, require_dir


@dataclass(slots=True)
class NewNote:
    id: str
    file: str
    title: str

    def to_json(self) -> dict:
        return {"id": self.id, "file": self.file, "title": self.title}


def new_note(
    root: Path, title: str, *, tags: Sequence[str] = (), body: str = "",
    link: str | None = None, now: datetime | None = None, locator: Locator | None = None,
) -> NewNote:
    """Write a new note file, named as org-roam names them; never overwrites."""
    require_dir(root)
    title = one_line(utf8_text(title, "the title"))
    body = utf8_text(body, "the body")
    if not title:
        raise OrgkitError("a note needs a title")
    bad = [t for t in tags if not sx.TAG.fullmatch(t)]
    if bad:
        raise OrgkitError(f"invalid tag {bad[0]!r}: tags are letters, digits, _ @ # %")
    node_id = new_id()
    lines = [":PROPERTIES:", id_line(node_id), ":END:", f"#+title: {title}"]
    if tags:
        lines.append(f"#+filetags: :{':'.join(tags)}:")
    text = "\n".join(lines) + "\n"
    extra = escape_lines(body).rstrip("\n")
    if link:
        description = link_description(_title_of(root, link, locator), 0)
        extra = (extra + "\n\n" if extra else "") + f"[[id:{link}][{description}]]"
    if extra:
        text += "\n" + extra + "\n"
    stamp = (now or datetime.now()).strftime("%Y%m%d%H%M%S")
    rel = _create_unique(root, f"{stamp}-{slugify(title) or 'note'}", text.encode("utf-8"))
    return NewNote(id=node_id, file=rel, title=title)


_MAX_SUFFIX = 1000


def _create_unique(root: Path, stem: str, data: bytes) -> str:
    """Create `stem.org` (or `stem-2.org`, ...) exclusively; return the name used."""
    for n in range(1, _MAX_SUFFIX + 1):
        name = fit_name(root, stem, ".org" if n == 1 else f"-{n}.org")
        try:
            atomic_write(root / name, data, expected=None, ids=note_ids(root))
            return name
        except AlreadyExists:
            continue
    raise OrgkitError(f"{root}: {_MAX_SUFFIX} notes named {stem}.org already; not written")


def utf8_text(text: str, what: str) -> str:
    """`text` if it can be written as UTF-8; an argument that was not UTF-8 (its bytes kept
    as lone surrogates) is refused in one line."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise OrgkitError(f"{what} is not valid UTF-8 (at character {exc.start + 1})") from None
    return text


def _title_of(root: Path, node_id: str, locator: Locator | None) -> str:
    for rel in (locator or rg_locator(root))([node_id]).get(node_id, []):
        for node in read_org_file(root, rel).nodes:
            if node.id == node_id:
                return node.title
    raise NotFound(f"unknown ID: {node_id} (for --link)")


def add_ids_to_file(path: Path, *, line: int | None = None, ids: NoteIds | None = None,
                    headings: bool = True, top: bool = False, dry_run: bool = False) -> list[Added]:
    """Give the heading at `line` (None: every heading, unless not `headings`) an ID if it has none,
    and with `top` the file itself; with `dry_run`, say which would get one and write nothing.

    The read, the change and the write happen under the note writer's lock, so
    concurrent orgkit writes to the file are serialised, none lost. `ids`: the
    notes the file belongs to (None: a file checked against itself alone).
    """
    added: list[Added] = []

    def change(original: bytes) -> bytes | None:
        bom = b"\xef\xbb\xbf" if original.startswith(b"\xef\xbb\xbf") else b""
        try:
            decode_org(original)
            text = original[len(bom):].decode("utf-8")
        except UndecodableFile as exc:
            raise OrgkitError(f"{path}: {exc}") from None
        if line is not None and not 1 <= line <= text.count("\n") + 1:
            raise OrgkitError(f"{path}: no line {line}")
        targets = [line] if line is not None else None if headings else []
        updated, found = add_ids(text, targets, top=top)
        added.extend(found)
        return bom + updated.encode("utf-8") if found and not dry_run else None

    if not Path(path).exists():
        raise OrgkitError(f"{path}: no such file")
    update_note(path, change, ids=ids)
    return added


@dataclass(slots=True)
class FileIds:
    """The IDs one file of a folder got (or, in a dry run, would get)."""

    file: str  # relative to the folder
    added: list[Added]


def add_ids_to_folder(folder: Path, *, headings: bool, top: bool, ids: NoteIds,
                      dry_run: bool = False) -> tuple[list[FileIds], list[str]]:
    """`add_ids_to_file` on every org file below `folder` (as org-roam finds them), one write each
    through the note writer; the files that got IDs, and a line for each file that could not."""
    done: list[FileIds] = []
    failed: list[str] = []
    for rel in iter_org_files(folder):
        try:
            added = add_ids_to_file(folder / rel, ids=ids, headings=headings, top=top, dry_run=dry_run)
        except OrgkitError as exc:
            failed.append(str(exc))
            continue
        if added:
            done.append(FileIds(rel, added))
    return done, failed

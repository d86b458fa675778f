"""Creating notes and giving headings IDs: the writes orgkit makes to notes.

Every write is atomic and refuses to clobber a file that changed since it was
read (see `orgkit.org.write`), so these are safe while Emacs has the file open.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .errors import NotFound, OrgkitError
from .org import decode_org
from .org.ids import Added, add_ids, id_line, new_id
from .org.text import UndecodableFile
from .org.write import atomic_write
from .retrieve.read import Locator, rg_locator
from .vault import read_org_file, require_dir


@dataclass(slots=True)
class NewNote:
    id: str
    file: str
    title: str

    def to_json(self) -> dict:
        return {"id": self.id, "file": self.file, "title": self.title}


def slugify(title: str) -> str:
    """org-roam's `org-roam-node-slug`: accents dropped, non-alphanumerics to _."""
    decomposed = unicodedata.normalize("NFD", title)
    stripped = unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))
    slug = re.sub(r"[\W_]", "_", stripped)
    slug = re.sub(r"__+", "_", slug).strip("_")
    return slug.lower()


def new_note(
    root: Path, title: str, *, tags: list[str] = (), body: str = "",
    link: str | None = None, now: datetime | None = None, locator: Locator | None = None,
) -> NewNote:
    """Write a new note file, named as org-roam names them; never overwrites."""
    require_dir(root)
    if not title.strip():
        raise OrgkitError("a note needs a title")
    bad = [t for t in tags if not re.fullmatch(r"[\w@#%]+", t)]
    if bad:
        raise OrgkitError(f"invalid tag {bad[0]!r}: tags are letters, digits, _ @ # %")
    node_id = new_id()
    lines = [":PROPERTIES:", id_line(node_id), ":END:", f"#+title: {title.strip()}"]
    if tags:
        lines.append(f"#+filetags: :{':'.join(tags)}:")
    text = "\n".join(lines) + "\n"
    extra = body.rstrip("\n")
    if link:
        extra = (extra + "\n\n" if extra else "") + f"[[id:{link}][{_title_of(root, link, locator)}]]"
    if extra:
        text += "\n" + extra + "\n"
    stamp = (now or datetime.now()).strftime("%Y%m%d%H%M%S")
    rel = f"{stamp}-{slugify(title) or 'note'}.org"
    atomic_write(root / rel, text.encode("utf-8"), expected=None)
    return NewNote(id=node_id, file=rel, title=title.strip())


def _title_of(root: Path, node_id: str, locator: Locator | None) -> str:
    for rel in (locator or rg_locator(root))([node_id]).get(node_id, []):
        for node in read_org_file(root, rel).nodes:
            if node.id == node_id:
                return node.title
    raise NotFound(f"unknown ID: {node_id} (for --link)")


def add_ids_to_file(path: Path, *, line: int | None = None) -> list[Added]:
    """Give the heading at `line` (None: every heading) an ID if it has none."""
    try:
        original = path.read_bytes()
    except OSError as exc:
        raise OrgkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    bom = b"\xef\xbb\xbf" if original.startswith(b"\xef\xbb\xbf") else b""
    try:
        decode_org(original)
        text = original[len(bom):].decode("utf-8")
    except UndecodableFile as exc:
        raise OrgkitError(f"{path}: {exc}") from None
    if line is not None and not 1 <= line <= text.count("\n") + 1:
        raise OrgkitError(f"{path}: no line {line}")
    updated, added = add_ids(text, None if line is None else [line])
    if added:
        atomic_write(path, bom + updated.encode("utf-8"), expected=original)
    return added

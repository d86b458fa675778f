"""What changed lately: the note files modified most recently, newest first.

Read from the files themselves (one `stat` each, then only the files shown
are parsed), so a note saved a second ago is there without an index. Each
file is named as search names it: its file node's ID, or its locator (its
path) when it has none.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from ..errors import OrgkitError
from ..vault import iter_org_files, read_org_file, require_dir
from .filters import Filters


def recent(root: Path, *, limit: int = 10, filters: Filters | None = None,
           hidden: frozenset[str] = frozenset()) -> list[dict]:
    """The `limit` note files modified last (in the folder and dates of `filters`: a call's own, whose
    one `stat` a file it keeps), newest first: {id, title, file, modified (ISO, local time), locator?};
    the files in `hidden` (deposits review has not admitted) left out, as search leaves them."""
    require_dir(root)
    filters = filters if filters is not None else Filters()
    stamped = []
    for rel in iter_org_files(root):
        modified = filters.modified(root, rel) if rel not in hidden and filters.admits_file(root, rel) else None
        if modified is not None:
            stamped.append((modified, rel))
    out = []
    for modified, rel in sorted(stamped, key=lambda m: (-m[0], m[1]))[:limit]:
        try:
            parsed = read_org_file(root, rel)
        except OrgkitError:
            continue
        top = next((n for n in parsed.nodes if n.level == 0), None)
        entry = {"id": top.id if top else None, "title": parsed.title, "file": rel,
                 "modified": datetime.fromtimestamp(modified).astimezone().isoformat(timespec="seconds")}
        out.append(entry if top else entry | {"locator": rel})
    return out

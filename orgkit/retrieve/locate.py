"""Finding the files that hold node IDs from the index, else with ripgrep (orgkit/locator.py), and
the notes a title or alias names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import OrgkitError
from ..locator import Locator, rg_locator
from ..org.units import is_locator
from .read import bare_id

if TYPE_CHECKING:
    from ..index.store import Index


def index_locator(index: "Index") -> Locator:
    """Look IDs up in the index; IDs it does not know (a note written since) go to ripgrep."""
    fallback = rg_locator(index.root)

    def locate(ids: list[str]) -> dict[str, list[str]]:
        found = index.locate(ids)
        unknown = [i for i in ids if i not in found]
        if unknown:
            found.update(fallback(unknown))
        return found

    return locate


def by_title(index: "Index", keys: list[str]) -> list[str]:
    """`keys` with each that is no ID the index knows, and no locator, taken as an exact title or alias
    (else one whatever its case): the ID (or locator) of the one note it names. A name several notes
    have is an error listing them; a name none has stays as it is (an unknown ID, said as such)."""
    plain = [bare_id(k) for k in keys]
    unknown = [k for k in plain if not is_locator(k)]
    known = index.locate(unknown) if unknown else {}
    names = index.named([k for k in unknown if k not in known])
    unnamed = [k for k in unknown if k not in known and k not in names]
    names.update(index.named(unnamed, fold=True) if unnamed else {})
    out = []
    for key in plain:
        held = names.get(key, [])
        if len(held) > 1:
            listed = ", ".join(f"{h['id']} ({h['file']}:{h['line']})" for h in held)
            raise OrgkitError(f"{len(held)} notes are titled {key!r}: {listed}; read one by its ID or locator")
        out.append(held[0]["id"] if held else key)
    return out

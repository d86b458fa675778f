"""Finding the files that hold node IDs from the index, else with ripgrep (orgkit/locator.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..locator import Locator, rg_locator

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

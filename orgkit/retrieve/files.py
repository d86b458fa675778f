"""Reading note files for retrieval, each at most once per request."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OrgkitError
from ..org import decode_org
from ..org.text import UndecodableFile


@dataclass
class TextCache:
    """Decoded file texts by relative path; failures remembered as warnings."""

    root: Path
    texts: dict[str, str | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def text(self, rel: str) -> str | None:
        if rel not in self.texts:
            try:
                self.texts[rel] = decode_org((self.root / rel).read_bytes())
            except OSError as exc:
                self.warnings.append(f"{rel}: cannot read ({exc.strerror or exc}), skipped")
                self.texts[rel] = None
            except UndecodableFile as exc:
                self.warnings.append(f"{rel}: {exc}")
                self.texts[rel] = None
        return self.texts[rel]


def require_dir(root: Path) -> None:
    if not root.is_dir():
        raise OrgkitError(f"notes directory not found: {root}")

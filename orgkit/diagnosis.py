"""What `orgkit doctor`'s checks share: what is checked (`Setup`) and what they report
(`Report`: facts and findings).

Apart from `doctor.py` so that the checks of other layers (the memory flow's
`memory/health.py`) use these types without importing the doctor that runs them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .embed import Embedder


@dataclass(slots=True)
class Finding:
    level: str  # "error", "warning" or "info"
    check: str
    message: str
    file: str | None = None
    line: int | None = None


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.level == "error" for f in self.findings)

    def add(self, level: str, check: str, message: str, file: str | None = None,
            line: int | None = None) -> None:
        self.findings.append(Finding(level, check, message, file, line))

    def to_json(self) -> dict:
        return {"ok": self.ok, "facts": self.facts, "findings": [asdict(f) for f in self.findings]}


# A check adds facts and findings about one concern of the notes in `root`.
Check = Callable[["Setup", Report], None]


@dataclass(frozen=True)
class Setup:
    """What is being checked: the notes, where their index lives, which model."""

    root: Path
    state_dir: Path | None = None
    embedder: Embedder | None = None
    database: str | None = None  # database.url: the index in PostgreSQL

    def model(self) -> Embedder:
        """The embedder to check: the one given, else the configured one."""
        from .config import load
        from .embed import Embedder

        return self.embedder or Embedder.from_config(load(self.root))

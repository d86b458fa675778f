"""`orgkit doctor`: what is wrong with the set-up and with the notes.

Each finding names a file and line where there is one. Errors are things that
lose or hide data (unreadable files, duplicate IDs, links to missing notes);
warnings degrade a feature (no ripgrep, no model); infos are worth a look
(notes that nothing links to).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from .errors import OrgkitError
from .rg import find_rg
from .vault import Vault

_WHERE = re.compile(r"^(?P<file>[^:]+\.org):(?P<line>\d+): (?P<message>.*)$")


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
    facts: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.level == "error" for f in self.findings)

    def add(self, level: str, check: str, message: str, file: str | None = None,
            line: int | None = None) -> None:
        self.findings.append(Finding(level, check, message, file, line))

    def to_json(self) -> dict:
        return {"ok": self.ok, "facts": self.facts, "findings": [asdict(f) for f in self.findings]}


# A check adds facts and findings about one concern.
Check = Callable[[Path, Report], None]


def check_ripgrep(root: Path, report: Report) -> None:
    rg = find_rg()
    if rg is None:
        report.facts["rg"] = None
        report.add("warning", "rg", "ripgrep (rg) not found: scan and read use a slower "
                   "pure-Python search (pip install ripgrep, or put rg on PATH)")
        return
    try:
        out = subprocess.run([rg, "--version"], capture_output=True, text=True, timeout=10)
        version = out.stdout.splitlines()[0] if out.stdout else "unknown version"
    except (OSError, subprocess.SubprocessError) as exc:
        report.facts["rg"] = {"path": rg}
        report.add("error", "rg", f"ripgrep at {rg} does not run: {exc}")
        return
    report.facts["rg"] = {"path": rg, "version": version}


def check_notes(root: Path, report: Report) -> None:
    """Read every file as a full load would, and look at the graph it makes."""
    vault = Vault.load(root)
    for rel, why in vault.skipped:
        report.add("error", "parse", why.removeprefix(f"{rel}: "), rel)
    for parsed in vault.files:
        for warning in parsed.warnings:
            m = _WHERE.match(warning)
            if m:
                report.add("warning", "parse", m["message"], m["file"], int(m["line"]))
            else:
                report.add("warning", "parse", warning, parsed.path)
    for kept, other in vault.duplicates:
        report.add("error", "duplicate-id", f"ID {kept.id} also at {kept.file}:{kept.line}",
                   other.file, other.line)
    linked: set[str] = set()
    for link in vault.links:
        if link.type != "id":
            continue
        linked.add(link.dest)
        if link.dest not in vault.by_id:
            report.add("error", "broken-link", f"id link to missing note {link.dest}",
                       link.file, link.line)
    for node in vault.nodes:
        if node.level == 0 and node.id not in linked:
            report.add("info", "orphan", f"nothing links to {node.title!r}", node.file, node.line)
    report.facts["notes"] = {"files": len(vault.files), "nodes": len(vault.nodes),
                             "links": len(vault.links)}


CHECKS: list[Check] = [check_ripgrep, check_notes]


def diagnose(root: Path, checks: list[Check] | None = None) -> Report:
    if not root.is_dir():
        raise OrgkitError(f"notes directory not found: {root}")
    report = Report()
    for check in checks if checks is not None else CHECKS:
        check(root, report)
    return report

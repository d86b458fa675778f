"""`orgkit doctor`: check the set-up and the notes; a summary first, the details after."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click

from ..doctor import Finding, Report, Setup, diagnose
from ..embed import Embedder
from .common import emit, handle_errors, json_option, load_config, notes_option, state_dir_option

SHOWN_PER_LEVEL = 10  # findings listed per level without --verbose
LEVELS = ("error", "warning", "info")


def _fact(value: object) -> str:
    """A fact as words: `files 529, nodes 574` rather than a Python dict."""
    if value is None:
        return "not found"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_fact(v)}" for k, v in value.items() if v is not None)
    return str(value)


def _finding(f: Finding) -> str:
    where = f"{f.file}:{f.line}: " if f.file and f.line else f"{f.file}: " if f.file else ""
    return f"{f.level}: {where}{f.message} [{f.check}]"


def summary(report: Report) -> str:
    """One line: ok or not, and how many findings of each level and check."""
    counts = Counter(f.level for f in report.findings)
    checks = Counter((f.level, f.check) for f in report.findings)
    parts = [f"{counts[level]} {level}{'s' if counts[level] != 1 else ''} ("
             + ", ".join(f"{n} {check}" for (lvl, check), n in sorted(checks.items()) if lvl == level) + ")"
             for level in LEVELS if counts[level]]
    return f"{'ok' if report.ok else 'broken'}: " + ("; ".join(parts) if parts else "nothing to report")


def render(report: Report, verbose: bool) -> str:
    lines = [summary(report)]
    lines += [f"{name}: {_fact(value)}" for name, value in report.facts.items()]
    for level in LEVELS:
        found = [f for f in report.findings if f.level == level]
        shown = found if verbose else found[:SHOWN_PER_LEVEL]
        lines += [_finding(f) for f in shown]
        if len(found) > len(shown):
            lines.append(f"... and {len(found) - len(shown)} more {level}s (--verbose lists them)")
    return "\n".join(lines)


def register(main: click.Group) -> None:
    @main.command("doctor")
    @click.option("--verbose", "-v", is_flag=True, help="List every finding (default: the first 10 of each level).")
    @notes_option
    @state_dir_option
    @json_option
    @handle_errors
    def doctor_command(verbose: bool, notes_dir: Path | None, state_dir: Path | None, as_json: bool) -> None:
        """Check ripgrep, the model, the index and the notes; exit 1 if broken.

        Prints a summary line first, then the facts and the findings.
        """
        config = load_config(notes_dir, state_dir)
        report = diagnose(Setup(config.notes, config.state_dir, Embedder.from_config(config)))
        emit(report.to_json() if as_json else report, as_json, lambda r: render(r, verbose))
        if not report.ok:
            sys.exit(1)

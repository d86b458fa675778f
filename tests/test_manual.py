"""The manual in notes/ documents every command and passes orgkit's own checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orgkit.cli import main
from orgkit.vault import Vault

NOTES = Path(__file__).resolve().parents[1] / "notes"


@pytest.fixture(scope="module")
def manual() -> Vault:
    return Vault.load(NOTES)


def test_every_command_is_documented(manual: Vault) -> None:
    text = "\n".join((NOTES / f.path).read_text(encoding="utf-8") for f in manual.files)
    missing = [name for name in main.list_commands(None) if not re.search(rf"\borgkit {name}\b", text)]
    assert not missing, f"commands without a note in notes/: {missing}"


def test_manual_is_a_clean_graph(manual: Vault) -> None:
    assert 20 <= len(manual.files) <= 90
    assert not manual.warnings, manual.warnings
    ids = set(manual.by_id)
    broken = [(l.file, l.line, l.dest) for l in manual.links if l.type == "id" and l.dest not in ids]
    assert not broken, f"id links to missing notes: {broken}"
    linked = {l.dest for l in manual.links if l.type == "id"}
    orphans = [n.file for n in manual.nodes if n.level == 0 and n.id not in linked]
    assert len(orphans) <= 1, f"notes nothing links to: {orphans}"

"""Things a new user tripped on: the help's variables, text output, cut results, the words of errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from memory_notes import FINDING, make_notes
from orgkit.config import SETTINGS, VARIABLES
from orgkit.ops import OpContext
from orgkit.serve import handle

ORGKIT = Path(__file__).resolve().parent.parent / "orgkit"
NOT_VARIABLES = {"ORGKIT_SCHEMA",  # an org property of schema notes
                 "ORGKIT_COMPLETE"}  # click's shell completion, shown under its own heading


def test_the_help_lists_every_environment_variable_orgkit_reads(cli) -> None:
    shown = cli("--help").stdout
    named = {m for path in ORGKIT.rglob("*.py") for m in re.findall(r"ORGKIT_[A-Z0-9_]*[A-Z0-9]", path.read_text())}
    listed = {*VARIABLES, *(s.env for s in SETTINGS.values() if s.env)}
    model = {n for n in named | listed if n.startswith("ORGKIT_LLM")}  # the model's settings, per role: ORGKIT_LLM_*
    listed -= model
    assert "ORGKIT_RG" in listed and named - NOT_VARIABLES - model <= listed
    assert all(name in shown for name in listed) and "ORGKIT_LLM_*" in shown


def test_tokens_and_the_trail_print_text_without_json(cli, tmp_path: Path) -> None:
    notes = make_notes(tmp_path / "notes")
    made = cli("token", "add", "alice", "--role", "agent", "--notes", str(notes))
    assert made.exit_code == 0 and made.stdout.startswith("ok_") and len(made.stdout.splitlines()) == 1
    listed = cli("token", "list", "--notes", str(notes)).stdout
    assert listed.startswith("alice  agent") and "active" in listed and "{" not in listed
    deposited = cli("deposit", "--notes", str(notes), "--title", "A finding", "--body", FINDING, "--no-process")
    assert deposited.exit_code == 0
    trail = cli("review", "trail", "--notes", str(notes)).stdout
    assert "deposit" in trail and not trail.lstrip().startswith("[")
    assert json.loads(cli("review", "trail", "--notes", str(notes), "--json").stdout)


def test_a_cut_scan_says_how_many_match(cli, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tea.org").write_text("#+title: Tea\n* Green tea\n* Black tea\n:PROPERTIES:\n"
                                   ":ROAM_ALIASES: \"Breakfast tea\"\n:END:\n* Coffee\n")
    every = json.loads(cli("scan", "tea", "--notes", str(notes), "--json").stdout)
    assert len(every) == 3  # the title and two headlines (one also by its alias)
    cut = cli("scan", "tea", "--limit", "2", "--notes", str(notes), "--json")
    assert len(json.loads(cut.stdout)) == 2
    assert "showing 2 of 3 matches (--limit 2)" in cut.stderr
    assert "showing" not in cli("scan", "tea", "--limit", "3", "--notes", str(notes)).stderr


def test_a_parameter_is_named_as_each_surface_calls_it(cli, tmp_path: Path) -> None:
    notes = make_notes(tmp_path / "notes")
    given = ["--title", "T", "--body", "x", "--path", "../../tmp/evil.org", "--no-process"]
    on_cli = cli("deposit", "--notes", str(notes), *given).stderr
    assert "--path '../../tmp/evil.org' must be a relative path inside the notes directory" in on_cli
    ctx = OpContext(notes, warm=True)
    try:
        answer = handle(ctx, json.dumps({"op": "deposit", "title": "T", "body": "x", "path": "../../tmp/evil.org"}))
    finally:
        ctx.close()
    assert answer == {"error": "path '../../tmp/evil.org' must be a relative path inside the notes directory"}


def test_a_machine_without_the_notes_names_the_path_it_looked_for(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORGKIT_DATABASE_URL", "postgresql://127.0.0.1:1/none")
    refused = cli("scan", "x", "--notes", "elsewhere")
    assert refused.exit_code == 1
    assert f"scan needs the notes, and {tmp_path / 'elsewhere'} is not here" in refused.stderr

"""Agents stay inside the notes: what `serve` and MCP clients name is refused outside the notes dir.

Each attack is made on every surface it applies to: the command line (the user,
who may name any file), `serve` (JSON lines) and MCP (through the SDK's
client). Outside paths, `..`, symlinks pointing out, path-valued run IDs,
run files pointing out, command-line-only parameters, and values no file,
query or ID may hold.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from mcp import Client

from conftest import write_notes
from orgkit.mcp import build_server
from orgkit.ops import OpContext
from orgkit.serve import handle
from test_index import NOTES

SECRET = "# Secret\n\nThe launch code is 0000, and nobody outside may read it.\n"
ADR = "# Use SQLite\n\n## Status\n\nAccepted\n\n## Decision\n\nWe will keep the cache in SQLite.\n"


@pytest.fixture
def notes(tmp_path: Path, monkeypatch) -> Path:
    root = write_notes(tmp_path / "notes", NOTES)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text(SECRET, encoding="utf-8")
    (tmp_path / "outside" / "other.org").write_text("* X\n#+begin_src sh :tangle x.sh\necho\n#+end_src\n")
    (root / "link.md").symlink_to(tmp_path / "outside" / "secret.md")
    (root / "adr.md").write_text(ADR, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    for key in ("ORGKIT_LLM_ENDPOINT", "ORGKIT_LLM_GGUF", "ORGKIT_NOTES", "ORGKIT_DATA_DIR", "ORGKIT_MODEL_PATH",
                "ORGKIT_EXTRACT_SOURCE_ROOTS"):
        monkeypatch.delenv(key, raising=False)
    return root


def served(notes: Path, *requests: dict) -> list[dict]:
    """Each request's `serve` response, on one warm context."""
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    return [handle(ctx, json.dumps(r)) for r in requests]


def over_mcp(notes: Path, *calls: tuple[str, dict]) -> list[tuple[bool, str]]:
    """Each tool call's (is_error, text) through the MCP SDK's client, on an in-process server."""
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root

    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return [(r.is_error, r.content[0].text) for r in anyio.run(main)]


def nothing_leaked(notes: Path) -> bool:
    """No file under the notes (the data dir included) holds the secret's text."""
    return not any("launch code" in p.read_text(errors="replace") for p in notes.rglob("*")
                   if p.is_file() and not p.is_symlink())


def test_agents_cannot_make_orgkit_copy_a_file_outside_the_notes(notes: Path, tmp_path: Path, cli,
                                                                 monkeypatch) -> None:
    outside = tmp_path / "outside" / "secret.md"
    attacks = [{"sources": [str(outside)], "schema": "adr"}, {"sources": ["../outside/secret.md"], "schema": "adr"},
               {"sources": ["link.md"], "schema": "adr"}, {"sources": [str(outside)], "schema": "adr", "plan": True}]
    for response in served(notes, *({"op": "extract", **a} for a in attacks)):
        assert "is outside the notes dir" in response["error"], response
    for is_error, text in over_mcp(notes, *(("extract", a) for a in attacks)):
        assert is_error and "'sources'" in text and "is outside the notes dir" in text, text
    assert nothing_leaked(notes) and not (notes / "orgkit-data").exists()
    # A source inside the notes is fine; a schema file outside is refused as a source is.
    (ok, text), (bad, why) = over_mcp(notes, ("extract", {"sources": ["adr.md"], "schema": "adr"}),
                                      ("extract", {"sources": ["adr.md"], "schema": str(tmp_path / "x.org")}))
    assert not ok and json.loads(text)["result"]["claims"]
    assert bad and "'schema'" in why and "outside the notes dir" in why
    # The user may widen it (a trust setting), and the command line names any file.
    monkeypatch.setenv("ORGKIT_EXTRACT_SOURCE_ROOTS", str(tmp_path / "outside"))
    ((is_error, text),) = over_mcp(notes, ("extract", {"sources": [str(outside)], "schema": "adr"}))
    assert not is_error, text
    result = cli("extract", str(outside), "--schema", "adr", "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stderr


def test_file_operations_of_a_server_stay_in_the_notes(notes: Path, tmp_path: Path, cli) -> None:
    other = str(tmp_path / "outside" / "other.org")
    (notes / "escape.org").write_text("* X\n#+begin_src sh :tangle ../escaped.sh\necho hi\n#+end_src\n")
    answers = served(notes, {"op": "tangle_plan", "files": [other]}, {"op": "tangle", "files": [other]},
                     {"op": "tangle", "files": ["../outside/other.org"]}, {"op": "id_add", "file": other, "all": True},
                     {"op": "detangle", "code_file": "cats.org"}, {"op": "model_distill", "out": str(tmp_path / "m")},
                     {"op": "tangle", "files": ["escape.org"]})
    assert all("is outside the notes dir" in a["error"] for a in answers[:4]), answers
    assert answers[4]["error"].startswith("detangle writes the org files") and "outside" in answers[5]["error"]
    assert "error" in answers[6] and not (tmp_path / "escaped.sh").exists()  # targets stay in the notes too
    ((is_error, text),) = over_mcp(notes, ("tangle_plan", {"files": [other]}))
    assert is_error and "is outside the notes dir" in text
    assert ":ID:" not in Path(other).read_text()
    # The user on the command line may name any file.
    assert cli("id", "add", other, "--all").exit_code == 0 and ":ID:" in Path(other).read_text()


def test_run_ids_are_ids_never_paths(notes: Path, tmp_path: Path, cli) -> None:
    for args in (["extract", "--resume", "../../etc"], ["audit", "../x"]):
        result = cli(*args, "--notes", str(notes))
        assert result.exit_code == 2 and "must be a run ID" in result.stderr
    answers = served(notes, {"op": "extract", "resume": "../../etc"}, {"op": "audit", "run": "/tmp"})
    assert all("must be a run ID" in a["error"] for a in answers), answers
    ((is_error, text),) = over_mcp(notes, ("audit", {"run": "a/../../b"}))
    assert is_error and "must be a run ID" in text
    (notes / "commit.json").write_text(json.dumps({"run": "../../../evil", "candidates": []}))
    result = cli("extract", "--commit", str(notes / "commit.json"), "--notes", str(notes))
    assert result.exit_code == 1 and "is not a run ID" in result.stderr
    ((is_error, text),) = over_mcp(notes, ("extract", {"commit": "commit.json"}))
    assert is_error and "is not a run ID" in text and not (tmp_path / "evil").exists()


def test_a_run_file_cannot_point_outside(notes: Path, tmp_path: Path, cli) -> None:
    result = cli("extract", str(notes / "adr.md"), "--schema", "adr", "--notes", str(notes), "--json")
    run = json.loads(result.stdout)["run"]
    run_file = notes / "orgkit-data" / "extract" / "runs" / run / "run.json"
    info = json.loads(run_file.read_text())
    for key, value, message in (("copy", str(tmp_path / "outside" / "secret.md"), "source copy"),
                                ("hub_note", "../../evil.org", "hub_note")):
        run_file.write_text(json.dumps({**info, "sources": [{**info["sources"][0], key: value}]}))
        result = cli("audit", run, "--notes", str(notes))
        assert result.exit_code == 1 and f"{message} " in result.stderr and "is outside" in result.stderr
        ((is_error, text),) = over_mcp(notes, ("audit", {"run": run}))
        assert is_error and "is outside" in text
    # An agent's audit re-reads an original only inside the notes: the run's own, here, is.
    run_file.write_text(json.dumps({**info, "sources": [{**info["sources"][0], "path": str(tmp_path / "x.md")}]}))
    ((is_error, text),) = over_mcp(notes, ("audit", {"run": run}))
    assert not is_error and "the original is outside the notes dir" in text


def test_body_file_is_offered_on_the_command_line_alone(notes: Path, tmp_path: Path, cli) -> None:
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root

    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            called = await client.call_tool("deposit", {"title": "t", "body_file": "/etc/passwd"})
            return tools["deposit"].input_schema, called

    schema, called = anyio.run(main)
    assert "body_file" not in schema["properties"] and "body" in schema["properties"]
    assert called.is_error and called.content[0].text.startswith("unknown field 'body_file' for deposit")
    (answer,) = served(notes, {"op": "deposit", "title": "t", "body_file": "/etc/passwd"})
    assert answer["error"].startswith("unknown field 'body_file'")
    (tmp_path / "finding.txt").write_text("A finding from a file.")
    result = cli("deposit", "--title", "From a file", "--body-file", str(tmp_path / "finding.txt"), "--no-process",
                 "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stderr


HOSTILE_VALUES = [
    ({"op": "scan", "query": "\ud800cats"}, "lone surrogate"),
    ({"op": "tangle_plan", "files": ["cats\0.org"]}, "NUL character"),
    ({"op": "scan", "query": "cats", "limit": 1e29}, "'limit' must be an integer of at most"),
    ({"op": "tangle_plan", "files": ["x" * 100_000 + ".org"]}, "path too long"),
    ({"op": "review_show", "id": "p" * 100_000}, "no proposal"),
    ({"op": "extract", "commit": "deep.json"}, "nested too deeply"),
]


@pytest.mark.parametrize("request_, message", HOSTILE_VALUES, ids=lambda v: str(v)[:20])
def test_hostile_values_get_one_clear_line_on_serve_and_mcp(notes: Path, request_: dict, message: str) -> None:
    (notes / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (answer,) = served(notes, request_)
    assert message in answer["error"] and "internal error" not in answer["error"], answer
    assert "\n" not in answer["error"] and len(answer["error"]) < 2100
    name, args = request_["op"], {k: v for k, v in request_.items() if k != "op"}
    ((is_error, text),) = over_mcp(notes, (name, args))
    assert is_error and message in text and "internal error" not in text and len(text) < 2100, text[:300]


def test_schema_files_a_server_reads_lie_in_the_notes(notes: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "schema.org"
    outside.write_text("#+title: Not yours\n")
    answers = served(notes, {"op": "schema_show", "name": str(outside)},
                     {"op": "schema_validate", "names": ["../outside/schema.org"]},
                     {"op": "schema_show", "name": "adr"})
    assert all("'name" in a["error"] and "outside the notes dir" in a["error"] for a in answers[:2]), answers
    assert answers[2]["result"]["name"] == "adr"
    ((is_error, text),) = over_mcp(notes, ("schema_show", {"name": str(outside)}))
    assert is_error and "outside the notes dir" in text
    # a bare name is a schema's name, never a file in the server's working directory
    (tmp_path / "planted").write_text("#+title: Planted\n* Claim\n:PROPERTIES:\n:TAG: claim\n:END:\n")
    (answer,) = served(notes, {"op": "schema_show", "name": "planted"})
    assert answer["error"].startswith("unknown schema 'planted' (known: "), answer


def test_a_server_client_cannot_mint_see_or_revoke_tokens(notes: Path, cli) -> None:
    """A `serve` client asking for an admin token would hold the team server's keys."""
    from orgkit.tokens import tokens_dir

    assert cli("token", "add", "rita", "--role", "reviewer", "--notes", str(notes)).exit_code == 0
    before = (tokens_dir(notes) / "tokens.json").read_bytes()
    answers = served(notes, {"op": "token_add", "name": "evil", "role": "admin"}, {"op": "token_list"},
                     {"op": "token_revoke", "name": "rita"}, {"op": "detangle", "code_file": "x.sh"})
    for answer, name in zip(answers, ("token_add", "token_list", "token_revoke", "detangle")):
        assert answer["error"].startswith(f"{name} ") and answer["error"].endswith(": the command line only")
    assert (tokens_dir(notes) / "tokens.json").read_bytes() == before

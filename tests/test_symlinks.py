"""A symlink in the notes that leads outside them is not followed: nothing reads the file it
points to (listing, index, scan, search, read, context, MCP resources, the team server), doctor
warns of it, and only the user's own `notes.follow_roots` adds such a root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient

from conftest import write_notes
from orgkit.mcp import build_server
from orgkit.ops import OpContext

WORD = "quokkaphrase"  # what the queries ask for
HELD = "wombatsecret"  # what the file outside holds beside it: never in an answer
NOTES = {"inside.org": ":PROPERTIES:\n:ID: in1\n:END:\n#+title: Inside\n\nA note about zebras.\n"}


def received(tmp_path: Path) -> Path:
    """Notes holding a link to a note outside them, and a link to a whole folder outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.org").write_text(f":PROPERTIES:\n:ID: out1\n:END:\n#+title: Private {WORD} {HELD}\n\n{WORD} {HELD}.\n")
    notes = write_notes(tmp_path / "notes", NOTES)
    (notes / "link.org").symlink_to(outside / "private.org")
    (notes / "folder").symlink_to(outside)
    (notes / "within.org").symlink_to(notes / "inside.org")  # a link inside the notes is followed
    return notes


def _json(result) -> object:
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_no_command_reads_through_a_link_out_of_the_notes(cli, tmp_path: Path, engine: str, request,
                                                          tiny_model: Path) -> None:
    notes = received(tmp_path)
    env = {"ORGKIT_STATE_DIR": str(tmp_path / "state"), "ORGKIT_DATABASE_URL": ""}
    if engine == "postgres":
        from conftest import new_database

        env["ORGKIT_DATABASE_URL"] = new_database(request.getfixturevalue("postgres_server"))
    assert cli("index", "--notes", str(notes), "--no-embed", env=env).exit_code == 0
    asks = [("nodes",), ("scan", WORD), ("search", WORD, "--mode", "lexical"), ("read", "out1")]
    if engine == "sqlite":  # what differs by engine is the index; these read the files the same way
        asks += [("context", WORD), ("backlinks", "out1")]
    for args in asks:
        result = cli(*args, "--notes", str(notes), "--json", env=env)
        assert HELD not in result.stdout + result.stderr, (args, result.stdout)
    files = {n["file"] for n in _json(cli("nodes", "--notes", str(notes), "--json", env=env))}
    assert files == {"inside.org", "within.org"}
    doctor = _json(cli("doctor", "--notes", str(notes), "--json", env=env))
    links = {f["file"]: f["message"] for f in doctor["findings"] if f["check"] == "symlink"}
    assert set(links) == {"link.org", "folder/"} and "not followed" in links["link.org"]


def test_a_root_the_user_adds_is_followed(cli, tmp_path: Path, user_config) -> None:
    notes = received(tmp_path)
    refused = write_notes(notes, {"orgkit.toml": f'[notes]\nfollow_roots = ["{tmp_path / "outside"}"]\n'})
    assert refused == notes
    shut = cli("scan", WORD, "--notes", str(notes), "--json")
    assert json.loads(shut.stdout) == [] and "notes.follow_roots ignored" in shut.stderr
    (notes / "orgkit.toml").unlink()
    user_config(f'[notes]\nfollow_roots = ["{tmp_path / "outside"}"]\n')
    opened = json.loads(cli("scan", WORD, "--notes", str(notes), "--json").stdout)
    assert {hit["file"] for hit in opened} == {"link.org", "folder/private.org"}


def test_agents_and_the_team_server_see_nothing_through_it(tmp_path: Path, tiny_model: Path) -> None:
    from orgkit.http.app import build_app
    from orgkit.http.guard import Allowed
    from orgkit.tokens import TokenStore

    notes = received(tmp_path)
    ctx = OpContext(notes, {"state_dir": tmp_path / "state"}, warm=True)
    ctx.refresh(embed=False)

    async def agent():
        async with Client(build_server(ctx, warm_up=False)) as client:
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            with pytest.raises(Exception, match="unknown ID: out1"):
                await client.read_resource("orgkit://node/out1")
            answers = [await client.call_tool(name, args) for name, args in (
                ("scan", {"query": WORD}), ("search", {"query": WORD}), ("context", {"query": WORD}),
                ("read", {"ids": ["out1"]}))]
            return listed, answers

    listed, answers = anyio.run(agent)
    assert "orgkit://node/out1" not in listed
    assert all(HELD not in answer.content[0].text for answer in answers)
    tokens = TokenStore(tmp_path / "tokens")
    reader = tokens.add("reader", "reader")
    app = build_app(OpContext(notes, {"state_dir": tmp_path / "state"}, warm=True), tokens,
                    Allowed(frozenset({"testserver"})), max_body=1 << 20, warm_up=False)
    with TestClient(app, headers={"Authorization": f"Bearer {reader}"}) as http:
        for name, args in (("scan", {"query": WORD}), ("search", {"query": WORD}), ("read", {"ids": ["out1"]})):
            assert HELD not in http.post(f"/ops/{name}", json=args).text
    assert os.path.islink(notes / "link.org")  # nothing removed it either

"""The whole memory flow end to end through the MCP SDK's client and a real `orgkit mcp`.

An agent deposits over MCP (answered at once), the librarian proposes in the
background (the loopback model, or the deterministic librarian without one), a
person accepts on the command line (or the `auto` policy does), and a later
agent recalls over MCP the new note with its provenance.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from memory_notes import FINDING, NOWEB, TANGLE, make_notes, rows

ORGKIT = str(Path(sys.executable).with_name("orgkit"))
REVIEW_TOOLS = {"review_accept", "review_edit", "review_reject", "review_undo"}


@pytest.fixture
def env(tiny_model, monkeypatch) -> dict:
    for key in list(os.environ):
        if key.startswith("ORGKIT_LLM"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("USER", "reviewer")
    return dict(os.environ)


def answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def session(notes: Path, env: dict, scenario):
    """Run `scenario(client)` against `orgkit mcp` on `notes` in a real subprocess."""
    async def main():
        params = StdioServerParameters(command=ORGKIT, args=["mcp", "--notes", str(notes)], env=env)
        async with Client(params) as client:
            return await scenario(client)

    return anyio.run(main)


async def deposit_and_wait(client, want: set[str]) -> tuple[dict, dict]:
    """Deposit over MCP; the answer comes at once, then poll `deposits` until processed."""
    made = answer(await client.call_tool("deposit", {"title": "Tangling and var", "body": FINDING,
                                                      "meta": ["source=mcp-agent"]}))["result"]
    assert set(made) >= {"id", "path", "status"} and made["status"] in ("pending", "processing")
    for _ in range(300):
        listed = answer(await client.call_tool("deposits", {"id": made["id"]}))["result"]
        if listed[0]["status"] in want | {"failed"}:
            return made, listed[0]
        await anyio.sleep(0.2)
    raise AssertionError("the deposit was never processed")


async def recall_until(client, node_id: str, query: str) -> dict:
    for _ in range(100):
        found = answer(await client.call_tool("recall", {"query": query, "caller": "agent-2"}))["result"]
        entry = next((n for n in found["included"] if n["id"] == node_id), None)
        if entry is not None:
            return entry
        await anyio.sleep(0.2)
    raise AssertionError(f"{node_id} was never recalled")


def accept_on_the_command_line(notes: Path, env: dict) -> list[dict]:
    import subprocess

    pending = json.loads(subprocess.run([ORGKIT, "review", "list", "--notes", str(notes), "--json"], env=env,
                                        capture_output=True, text=True, check=True).stdout)
    done = subprocess.run([ORGKIT, "review", "accept", *[p["id"] for p in pending], "--notes", str(notes),
                           "--json"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return pending


MODEL_REPLY = {"proposals": [
    {"kind": "link", "dest": TANGLE, "description": "how tangling works", "chunks": [1]},
    {"kind": "new", "title": "Why var is refused", "body": "Evaluating :var would run code.", "chunks": [1]},
    {"kind": "append", "target": NOWEB, "text": "Prefer noweb over :var.", "chunks": [2]},
    {"kind": "tag", "tag": "literate", "chunks": [9]},
]}


def test_mcp_deposit_review_recall_with_the_loopback_model(tmp_path: Path, env: dict, llm_server) -> None:
    notes = make_notes(tmp_path / "notes")
    (notes / "orgkit.toml").write_text('[llm]\nmodel = "loopback"\n')
    env["ORGKIT_LLM_ENDPOINT"] = llm_server.url  # trust-granting: never from the notes' orgkit.toml
    llm_server.reply(MODEL_REPLY)

    async def first(client):
        tools = {t.name for t in (await client.list_tools()).tools}
        made, done = await deposit_and_wait(client, {"proposed"})
        return tools, made, done

    tools, made, done = session(notes, env, first)
    assert {"deposit", "deposits", "recall", "review_list", "review_show"} <= tools
    assert not REVIEW_TOOLS & tools  # agents cannot approve unless mcp.allow_review is on
    assert done["status"] == "proposed" and done["via"] == "mcp"
    invalid = rows(notes, "SELECT reason FROM proposals WHERE status = 'rejected'")
    assert invalid == [{"reason": "set aside by the librarian: it cites chunk(s) 9, which the librarian was not shown"}]
    pending = accept_on_the_command_line(notes, env)
    new_id = next(p["payload"]["id"] for p in pending if p["kind"] == "new")

    async def later(client):
        return (await recall_until(client, new_id, "why is var refused"),
                await recall_until(client, made["id"], "tangling var noweb"))

    new_note, deposited = session(notes, env, later)
    prov = new_note["provenance"]
    assert prov["origin"] == "librarian" and prov["deposit"] == made["id"] and prov["lane"] == "agent"
    assert prov["approved_by"] == "reviewer" and prov["approved_at"]
    assert {e["id"] for e in prov["evidence"]} >= {made["id"]}
    dprov = deposited["provenance"]
    assert dprov["deposit"] == made["id"] and dprov["approved_by"] == "reviewer"
    assert dprov["meta"] == {"source": "mcp-agent"} and dprov["via"] == "mcp"
    logged = rows(notes, "SELECT actor, detail FROM audit WHERE action = 'recall'")
    assert any(r["actor"] == "agent-2" and new_id in r["detail"]["returned"] for r in logged)


def test_mcp_flow_with_the_auto_policy(tmp_path: Path, user_config, env: dict, llm_server) -> None:
    notes = make_notes(tmp_path / "notes")
    user_config('[admission]\ndeposits = { agent = "auto" }\n')
    env["ORGKIT_LLM_ENDPOINT"] = llm_server.url
    llm_server.reply(MODEL_REPLY)

    async def flow(client):
        made, _ = await deposit_and_wait(client, {"proposed"})
        return made, await recall_until(client, made["id"], "tangling var noweb")

    made, entry = session(notes, env, flow)
    assert entry["provenance"]["approved_by"] == "admission policy"
    assert "Prefer noweb over :var." in (notes / "noweb.org").read_text()
    assert rows(notes, "SELECT count(*) AS n FROM proposals WHERE status = 'pending'") == [{"n": 0}]


def test_mcp_flow_without_a_model(tmp_path: Path, env: dict) -> None:
    notes = make_notes(tmp_path / "notes")

    async def first(client):
        return await deposit_and_wait(client, {"no-model"})

    made, done = session(notes, env, first)
    assert done["status"] == "no-model" and done["model"] == "deterministic"
    pending = accept_on_the_command_line(notes, env)
    assert {p["kind"] for p in pending} >= {"admit", "link", "tag"}

    async def later(client):
        return await recall_until(client, made["id"], "tangling var noweb")

    entry = session(notes, env, later)
    assert entry["provenance"]["approved_by"] == "reviewer"
    assert f"[[id:{TANGLE}]" in entry["content"]


def test_review_decisions_over_mcp_only_when_allowed(tmp_path: Path, env: dict) -> None:
    notes = make_notes(tmp_path / "notes")
    env["ORGKIT_MCP_ALLOW_REVIEW"] = "1"

    async def flow(client):
        tools = {t.name for t in (await client.list_tools()).tools}
        made, _ = await deposit_and_wait(client, {"no-model"})
        pending = answer(await client.call_tool("review_list", {}))["result"]
        admit = next(p for p in pending if p["kind"] == "admit")
        decided = answer(await client.call_tool("review_accept", {"ids": [admit["id"]]}))["result"]
        return tools, decided

    tools, decided = session(notes, env, flow)
    assert REVIEW_TOOLS <= tools and decided["batch"]
    assert rows(notes, "SELECT actor FROM decisions") == [{"actor": "reviewer via mcp"}]

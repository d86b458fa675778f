"""Nothing is open by omission: every operation, MCP request, HTTP route and command names who may use it.

The walk is over what each surface really serves (the registry, the MCP
server's handlers, the app's routes, the command line's commands), against
the guards they declare, so a new one without a guard fails here.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import click
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from starlette.routing import Route

from conftest import write_notes
from orgkit.cli import SERVER_MODULES, main
from orgkit.errors import Refused
from orgkit.http.app import GUARDS as ROUTE_GUARDS
from orgkit.http.app import build_app, guarded
from orgkit.http.guard import Allowed
from orgkit.mcp import GUARDS as MCP_GUARDS
from orgkit.mcp import PROTOCOL, TOOLS, build_server
from orgkit.ops import Op, OpContext, call, registry
from orgkit.ops.spec import Param
from orgkit.roles import OWNER, ROLES, STDIO, Identity
from orgkit.serve import handle
from orgkit.tokens import TokenStore
from test_index import NOTES


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def test_every_operation_states_its_role_and_one_without_is_refused_at_declaration() -> None:
    assert all(op.role in ROLES and op.role == op.role for op in registry().values())
    for role in (None, "", "root", "Admin"):
        with pytest.raises(ValueError, match="state its role"):
            Op("open_by_default", "An operation nobody guarded.", lambda ctx, args: None, role=role)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="state its role"):
        Op("open_by_default", "No role given at all.", lambda ctx, args: None, params=(Param("x", "string", "x"),))


def test_a_call_without_a_caller_is_refused_before_anything_runs(notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    try:
        for name in ("nodes", "read", "new", "index", "deposit"):
            with pytest.raises(Refused, match="names no caller"):
                call(ctx, name, {"ids": ["x"]} if name == "read" else {})
            with pytest.raises(Refused, match="names no caller"):
                call(ctx, name, {}, identity="admin")  # type: ignore[arg-type]  # a role is not a caller
    finally:
        ctx.close()
    assert not (notes / ".orgkit").exists()  # refused before the index was even opened
    assert "error" not in handle(OpContext(notes, warm=True), '{"op": "nodes"}')  # serve names its caller: STDIO


def test_every_mcp_request_the_server_answers_has_a_guard(notes: Path) -> None:
    server = build_server(OpContext(notes, warm=True), warm_up=False)
    handlers = set(server._request_handlers)
    assert handlers, "the SDK keeps its handlers elsewhere now: walk them there"
    assert handlers <= set(MCP_GUARDS), f"MCP requests without a guard: {sorted(handlers - set(MCP_GUARDS))}"
    for method, guard in MCP_GUARDS.items():
        assert guard in (TOOLS, PROTOCOL) or registry()[guard].role in ROLES, method
    # everything that hands out notes is guarded by an operation, never by the protocol marker
    assert {m for m, g in MCP_GUARDS.items() if g == PROTOCOL} == {"ping", "server/discover"}


def _without_a_caller(notes: Path, scenario) -> object:
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root

    async def main():
        async with Client(build_server(ctx, warm_up=False, identify=lambda rctx: None)) as client:
            return await scenario(client)

    try:
        return anyio.run(main)
    finally:
        ctx.close()


def test_a_team_server_request_without_a_caller_gets_no_prompt_resource_or_tool(notes: Path) -> None:
    async def scenario(client) -> list[str]:
        refused = []
        for name, request in (("prompts/list", client.list_prompts()),
                              ("prompts/get", client.get_prompt("atomic-notes", {"query": "x"})),
                              ("resources/list", client.list_resources()),
                              ("resources/templates/list", client.list_resource_templates()),
                              ("resources/read", client.read_resource("orgkit://node/cats"))):
            try:
                await request
            except MCPError as exc:
                assert "no caller" in str(exc) or "needs the reader role" in str(exc), str(exc)
                refused.append(name)
        assert (await client.list_tools()).tools == []
        result = await client.call_tool("nodes", {})
        assert result.is_error and "names no caller" in result.content[0].text
        return refused

    assert _without_a_caller(notes, scenario) == ["prompts/list", "prompts/get", "resources/list",
                                                  "resources/templates/list", "resources/read"]


def test_a_reader_token_gets_prompts_and_resources_through_the_same_rule(notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    reader = Identity("reader-1", "reader")

    async def main():
        async with Client(build_server(ctx, warm_up=False, identify=lambda rctx: reader)) as client:
            prompts = (await client.list_prompts()).prompts
            read = await client.read_resource("orgkit://node/cats")
            tools = {t.name for t in (await client.list_tools()).tools}
            return prompts, read, tools

    try:
        prompts, read, tools = anyio.run(main)
    finally:
        ctx.close()
    assert prompts and read.contents and "Cats" in read.contents[0].text
    assert tools and all(registry()[name].role == "reader" for name in tools)


def test_every_http_route_has_a_guard_and_a_new_one_without_is_refused(tmp_path: Path, notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    try:
        app = build_app(ctx, TokenStore(tmp_path / "tokens"), Allowed(frozenset({"test"})), max_body=1000,
                        warm_up=False)
        paths = {route.path for route in app.app.routes}  # type: ignore[attr-defined]
    finally:
        ctx.close()
    assert paths == set(ROUTE_GUARDS), (paths, set(ROUTE_GUARDS))
    with pytest.raises(RuntimeError, match="routes without a guard.*/export"):
        guarded([Route("/export", lambda request: None)])


def test_every_command_is_an_operation_the_owner_calls_or_a_server(notes: Path) -> None:
    ops = {op.command[0] for op in registry().values() if op.command is not None}
    servers = {name for names in SERVER_MODULES.values() for name in names}
    commands = set(main.list_commands(click.Context(main)))
    assert commands <= ops | servers, commands - ops - servers
    assert OWNER.local and OWNER.role == "admin" and STDIO.local and STDIO.role == "admin" and OWNER != STDIO


def test_a_caller_is_what_its_token_says_and_no_more(notes: Path) -> None:
    from orgkit.roles import reaches_machine

    assert [reaches_machine(i) for i in (OWNER, STDIO, Identity("owner", "admin"), None)] == [True, False, False, False]
    stored = Identity("someone", "superuser")  # a role a stored record names that orgkit has not
    assert not any(stored.may(role) for role in ROLES) and not OWNER.may("superuser")
    ctx = OpContext(notes, warm=True)
    ctx.surface = "http"
    try:
        with pytest.raises(Refused, match="nodes needs the reader role"):
            call(ctx, "nodes", {}, identity=stored)
        assert call(ctx, "nodes", {}, identity=Identity("someone", "reader")).result
    finally:
        ctx.close()

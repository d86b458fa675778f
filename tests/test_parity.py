"""Every read-only operation gives the same answer from the CLI, `serve`, MCP and the team server.

Parametrised over the registry: an operation declared later is covered with no
new test code. Arguments are made from each operation's declared parameters
(required ones always; then every optional one too), and bad arguments from
their types and bounds; a result or an error message must be the same on every
surface.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from conftest import write_notes
from orgkit.mcp import build_server
from orgkit.ops import Op, OpContext, registry
from orgkit.ops.spec import Param
from orgkit.serve import handle
from test_index import NOTES

READ_ONLY = [op for op in registry().values() if not op.writes and not op.cli_only]  # cli_only: one surface
# Values for parameters whose name says what they need in the test notes.
BY_NAME = {"query": "dogs", "id": "dogs", "ids": ["cats", "dogs"], "name": "atomic-notes",
           "stage": "neuro", "files": ["cats.org"], "since": "30d", "until": "2099-01-01", "folder": "*.org"}
BY_TYPE = {"string": "x", "path": "cats.org", "array": ["x"], "boolean": True, "object": {}}


def sample(param: Param) -> Any:
    if param.name in BY_NAME:
        return BY_NAME[param.name]
    if param.enum:
        return param.enum[-1]
    if param.type in ("integer", "number"):
        return int(param.minimum or 0) + 2
    return BY_TYPE[param.type]


def variants(op: Op) -> list[dict]:
    required = {p.name: sample(p) for p in op.params if p.required}
    full = {p.name: sample(p) for p in op.params}
    return [required] if full == required else [required, full]


def bad_values(op: Op) -> list[tuple[str, Any]]:
    """Wrong values the shell can express too: text for numbers and objects, out-of-range, off-enum."""
    out: list[tuple[str, Any]] = []
    for p in op.params:
        if p.type in ("integer", "number", "object"):
            out.append((p.name, "x"))
        if p.minimum is not None:
            out.append((p.name, int(p.minimum) - 1))
        if p.enum:
            out.append((p.name, "sideways"))
    return out


class Surfaces:
    """The same notes and state dir seen through the CLI, a warm `serve` context, an MCP client and
    the team server's JSON operations (in-process, with an admin token)."""

    def __init__(self, cli, notes: Path, state: Path) -> None:
        self.cli, self.notes, self.state = cli, notes, state
        self.serve_ctx = self._context()
        self.mcp_ctx = self._context()
        self._http = None
        self._closing = contextlib.ExitStack()

    def close(self) -> None:
        self._closing.close()

    def _context(self) -> OpContext:
        ctx = OpContext(self.notes, {"state_dir": self.state}, warm=True)
        ctx.base = ctx.root
        return ctx

    def via_cli(self, op: Op, args: dict) -> tuple[str, Any]:
        argv = list(op.command)
        for p in op.params:
            value = args.get(p.name)
            if value is None or value is False:
                continue
            if p.positional:
                argv += value.split() if p.words else value if isinstance(value, list) else [str(value)]
            elif value is True:
                argv.append(p.option)
            else:
                text = json.dumps(value) if isinstance(value, dict) else \
                    ",".join(value) if isinstance(value, list) else str(value)
                argv += [p.option, text]
        if op.notes:
            argv += ["--notes", str(self.notes), "--state-dir", str(self.state)]
        result = self.cli(*argv, "--json")
        if result.exit_code == 2:
            assert result.stderr.count("\n") == 1, result.stderr  # one line, as every refusal
            return "error", result.stderr.strip().removeprefix("orgkit: error: ")
        if result.stdout.strip():
            return "result", json.loads(result.stdout)
        assert result.exit_code == 1, result.output
        return "error", result.stderr.strip().splitlines()[-1].removeprefix("orgkit: error: ")

    def via_serve(self, op: Op, args: dict) -> tuple[str, Any]:
        response = handle(self.serve_ctx, json.dumps({"op": op.name, **args}))
        return ("error", response["error"]) if "error" in response else ("result", response["result"])

    def via_mcp(self, op: Op, args: dict) -> tuple[str, Any]:
        async def main():
            async with Client(build_server(self.mcp_ctx, warm_up=False)) as client:
                return await client.call_tool(op.name, args)

        result = anyio.run(main)
        if result.is_error:
            return "error", result.content[0].text
        return "result", result.structured_content["result"]

    def via_http(self, op: Op, args: dict) -> tuple[str, Any]:
        if self._http is None:
            from starlette.testclient import TestClient

            from orgkit.http.app import build_app
            from orgkit.http.guard import Allowed
            from orgkit.tokens import TokenStore

            tokens = TokenStore(self.state / "http-data")
            token = tokens.add("parity", "admin")
            app = build_app(self._context(), tokens, Allowed(frozenset({"testserver"})), max_body=1 << 20,
                            warm_up=False)
            self._http = self._closing.enter_context(TestClient(app, headers={"Authorization": f"Bearer {token}"}))
        body = self._http.post(f"/ops/{op.name}", json=args).json()
        return ("error", body["error"]) if "error" in body else ("result", body["result"])

    def labelled(self, op: Op, args: dict) -> dict[str, tuple[str, Any]]:
        """Each surface's answer by the surface's name."""
        answers = {"serve": self.via_serve(op, args)}
        if op.command is not None:
            answers["cli"] = self.via_cli(op, args)
        if op.mcp:
            answers["mcp"] = self.via_mcp(op, args)
            answers["http"] = self.via_http(op, args)
        return {surface: (kind, _steady(value)) for surface, (kind, value) in answers.items()}

    def all(self, op: Op, args: dict) -> list[tuple[str, Any]]:
        return list(self.labelled(op, args).values())


CLI_ONLY = {p.name for op in registry().values() for p in op.params if p.cli_only}


def _steady(value: Any) -> Any:
    """The answer without timings, which differ from one call to the next, and without the parameters
    only the command line offers (the registry's listing shows them there alone)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if not k.endswith("seconds") and k not in CLI_ONLY}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


@pytest.fixture
def surfaces(cli, tmp_path: Path, tiny_model: Path) -> Surfaces:
    surfaces = Surfaces(cli, write_notes(tmp_path / "notes", NOTES), tmp_path / "state")
    yield surfaces
    surfaces.close()


# What describes the machine: the user (cli) and an admin (http) see it whole, an agent (serve,
# MCP over stdio) with paths relative to the notes and hosts hidden.
SETUP = {"doctor", "config", "db_status"}
# Answers that name a file of the machine outside the notes (the model's copy): whole for the user
# and an admin, hidden from an agent.
MACHINE = SETUP | {"model_pull"}


@pytest.mark.parametrize("op", READ_ONLY, ids=lambda op: op.name)
def test_every_surface_gives_the_same_answer(surfaces: Surfaces, op: Op) -> None:
    for args in variants(op):
        answers = surfaces.labelled(op, args)
        groups = [["cli", "http"], ["serve", "mcp"]] if op.name in MACHINE else [list(answers)]
        for group in groups:
            first, *others = [answers[surface] for surface in group if surface in answers]
            for other in others:
                assert other == first, f"{op.name} {args}"
        if op.name in SETUP:
            assert str(surfaces.notes.parent) in json.dumps(answers["cli"])
            assert str(surfaces.notes.parent) not in json.dumps(answers["serve"]), answers["serve"]


@pytest.mark.parametrize("op", [op for op in READ_ONLY if bad_values(op)], ids=lambda op: op.name)
def test_every_surface_rejects_bad_parameters_with_the_same_message(surfaces: Surfaces, op: Op) -> None:
    base = {p.name: sample(p) for p in op.params if p.required}
    for name, value in bad_values(op):
        answers = surfaces.all(op, {**base, name: value})
        assert {kind for kind, _ in answers} == {"error"}, f"{op.name} {name}={value!r}: {answers}"
        messages = {message for _, message in answers}
        assert len(messages) == 1, f"{op.name} {name}={value!r}: {messages}"
        assert f"'{name}' must be" in messages.pop()


def test_the_parity_covers_the_core_operations() -> None:
    covered = {op.name for op in READ_ONLY}
    assert {"scan", "search", "read", "context", "nodes", "links", "backlinks", "doctor", "config", "ops",
            "skills_list", "skills_show", "skills_run", "skills_prompt", "tangle_plan"} <= covered
    assert all((op.command is not None) + op.mcp >= 1 for op in READ_ONLY)  # two surfaces at least

"""Who may call what is decided once, in `ops.call`, for every surface; failures are answered by one table."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from memory_notes import make_notes
from orgkit.cli import main
from orgkit.deadline import DeadlinePassed
from orgkit.errors import NotFound, Refused
from orgkit.ops import OpContext, ParamError, call, registry
from orgkit.ops.answers import answer
from orgkit.tokens import Identity
from test_http import HttpServer


def minimal_adapter(notes: Path, name: str, params: dict[str, Any], role: str) -> Any:
    """A new surface in a few lines: it passes the caller and holds no rule of its own."""
    ctx = OpContext(notes, warm=True)
    ctx.surface = "http"
    try:
        return call(ctx, name, params, identity=Identity("someone", role)).result
    finally:
        ctx.close()


def test_every_write_operation_refuses_a_reader_in_ops_call(tmp_path: Path) -> None:
    notes = make_notes(tmp_path / "notes")
    before = sorted(p.relative_to(notes) for p in notes.rglob("*"))
    writes = [op for op in registry().values() if op.writes and op.role != "reader"]  # recall: a reader's
    assert len(writes) > 10
    for op in writes:
        with pytest.raises(Refused, match=f"{op.name} needs the {op.role} role"):
            minimal_adapter(notes, op.name, {}, "reader")
    assert sorted(p.relative_to(notes) for p in notes.rglob("*")) == before  # refused before anything ran
    assert minimal_adapter(notes, "nodes", {}, "reader")  # reading is a reader's


def test_a_value_that_needs_a_higher_role_is_refused_too(tmp_path: Path) -> None:
    notes = make_notes(tmp_path / "notes")
    with pytest.raises(Refused, match="lane 'human' is for people with the reviewer role .this token's role is agent"):
        minimal_adapter(notes, "deposit", {"title": "A finding", "body": "text", "lane": "human"}, "agent")


def test_one_table_answers_every_kind() -> None:
    assert [answer(e).http for e in (NotFound("x"), ParamError("x"), Refused("x"), DeadlinePassed("x"))] \
        == [404, 400, 403, 503]
    assert answer(ParamError("x")).exit == 2 and answer(NotFound("x")).exit == 1
    assert answer(KeyError("a bug")).http == 500


@pytest.fixture(scope="module")
def served(tmp_path_factory, tiny_model_dir):
    from tiny_model import MODEL_NAME

    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")}
    env |= {"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir), "ORGKIT_DEPOSIT_MAX_BYTES": "1000"}
    notes = make_notes(tmp_path_factory.mktemp("authorization") / "notes")
    tokens = [json.loads(CliRunner().invoke(main, ["token", "add", f"{role}-1", "--role", role, "--notes", str(notes),
                                                   "--json"], env=env).stdout)["token"] for role in ("reader", "agent")]
    server = HttpServer(notes, env)
    yield server, *tokens
    server.close()


def test_the_table_statuses_over_http(served) -> None:
    server, token, agent = served
    unknown = server.op("read", token, ids=["no-such-id"])
    assert unknown.status_code == 404 and "unknown ID" in unknown.json()["error"]
    assert server.op("search", token, query="tangling", limit="many").status_code == 400
    refused = server.op("deposit", token, title="A finding", body="text")
    assert refused.status_code == 403 and "deposit needs the agent role" in refused.json()["error"]
    assert server.op("no_such_op", token).status_code == 404
    oversized = server.op("deposit", agent, title="A finding", body="x" * 2000)
    assert oversized.status_code == 400 and "over deposit.max_bytes (1000)" in oversized.json()["error"]
    outside = server.op("deposit", agent, title="A finding", body="text", path="../../tmp/evil.org")
    assert outside.status_code == 400
    assert outside.json()["error"] == "path '../../tmp/evil.org' must be a relative path inside the notes directory"
    assert isinstance(httpx.get(f"{server.url}/ops", headers={"Authorization": f"Bearer {token}"}).json()["result"],
                      list)

"""A note may name any file; naming a file never makes orgkit read it for a server's caller.

A note's metadata and text can point anywhere: `file:` links in `ROAM_REFS` and other
properties, `[[file:...]]` links in the body, a `#+SETUPFILE:` keyword, a symlink beside
it. orgkit indexes and lists such names as the note's own text, and reads a file for a
server's caller (serve, MCP, the team server's HTTP) only when it is a note inside the notes dir that the index
walks: never a file beside the notes, a system file, a symlink out, or the state dir.
Every probe's answer is searched for a marker that only those files hold.
"""

from __future__ import annotations

import json
from pathlib import Path

import os

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from orgkit.mcp import build_server
from orgkit.ops import OpContext
from orgkit.roles import Identity
from orgkit.serve import handle
from team_server import orgkit
from test_http import HttpServer

MARK = "zq-out-of-bounds-7"  # held only by files no caller may have read; no request names it
NOTE_ID = "11111111-1111-4111-8111-111111111111"
PLACES = ["../outside/secret.org", "link.org", ".orgkit/state.org", "/etc/passwd", "~/secret.org",
          "file:../outside/secret.org", "dirlink/secret.org"]


@pytest.fixture
def notes(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "notes"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.org").write_text(f"* Secret\n{MARK} beside the notes\n")
    (outside / "setup.org").write_text(f"#+PROPERTY: header-args :tangle {MARK}-outside.sh\n")
    (root / ".orgkit").mkdir(parents=True)
    (root / ".orgkit" / "state.org").write_text(f"* State\n{MARK} in the state dir\n")
    (root / ".orgkit" / "setup.org").write_text(f"#+PROPERTY: header-args :tangle {MARK}-state.sh\n")
    (root / "link.org").symlink_to(outside / "secret.org")
    (root / "dirlink").symlink_to(outside)
    (root / "setuplink.org").symlink_to(outside / "setup.org")
    refs = " ".join(f"file:{p}" for p in PLACES)
    links = " ".join(f"[[file:{p}][{p}]]" for p in PLACES)
    (root / "a.org").write_text(f":PROPERTIES:\n:ID: {NOTE_ID}\n:ROAM_REFS: {refs}\n"
                                f":SOURCE: file:../outside/secret.org\n:END:\n"
                                f"#+title: Pointer\n\nIt points at {links}.\n")
    setups = "".join(f"#+SETUPFILE: {p}\n" for p in ("/etc/passwd", "../outside/setup.org", "setuplink.org",
                                                       ".orgkit/setup.org", "file:../outside/setup.org"))
    (root / "t.org").write_text(f"{setups}* Block\n#+begin_src sh\necho hi\n#+end_src\n")
    monkeypatch.chdir(tmp_path)
    for key in ("ORGKIT_NOTES", "ORGKIT_STATE_DIR", "ORGKIT_DATA_DIR", "ORGKIT_FOLLOW_ROOTS"):
        monkeypatch.delenv(key, raising=False)
    return root


def _clean(answer: object) -> bool:
    text = json.dumps(answer)
    return MARK not in text and "root:x:0" not in text


REQUESTS = [
    {"op": "read", "ids": [NOTE_ID], "depth": 3},
    *({"op": "read", "ids": [p]} for p in PLACES),
    *({"op": "read", "ids": [f"{p}::*Secret"]} for p in PLACES),
    {"op": "links", "id": NOTE_ID},
    {"op": "backlinks", "id": NOTE_ID},
    {"op": "nodes"},
    {"op": "context", "query": "secret beside the notes in the state dir", "budget": 4000},
    {"op": "search", "query": "secret beside the notes in the state dir"},
    {"op": "scan", "query": "Secret"},
    {"op": "recent"},
    {"op": "tangle_plan", "files": ["t.org"]},
]


def test_no_serve_answer_holds_a_file_a_note_points_at(notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    try:
        answers = [(r, handle(ctx, json.dumps(r))) for r in REQUESTS]
    finally:
        ctx.close()
    leaked = [r for r, answer in answers if not _clean(answer)]
    assert leaked == []
    read = next(a for r, a in answers if r.get("depth") == 3)["result"]
    assert [d["id"] for d in read] == [NOTE_ID]  # `file:` links are never followed
    assert all("Traceback" not in json.dumps(a) for _, a in answers)


def test_no_mcp_resource_or_tool_holds_a_file_a_note_points_at(notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    reader = Identity("reader-1", "reader")

    async def main() -> list[str]:
        texts = []
        async with Client(build_server(ctx, warm_up=False, identify=lambda rctx: reader)) as client:
            for place in PLACES:
                for uri in (f"orgkit://unit/{place}", f"orgkit://node/{place}", f"file://{place}"):
                    try:
                        read = await client.read_resource(uri)
                        texts += [c.text for c in read.contents]
                    except MCPError as exc:
                        texts.append(str(exc))
            read = await client.call_tool("read", {"ids": [NOTE_ID], "depth": 3})
            texts += [json.dumps(c.model_dump()) for c in read.content]
            plan = await client.call_tool("tangle_plan", {"files": ["t.org"]})
            texts += [json.dumps(c.model_dump()) for c in plan.content]
        return texts

    try:
        texts = anyio.run(main)
    finally:
        ctx.close()
    assert [t for t in texts if not _clean(t)] == []


def test_a_setupfile_inside_the_notes_still_counts(notes: Path) -> None:
    (notes / "t.org").write_text("#+SETUPFILE: setup/common.setup\n* Block\n#+begin_src sh\necho hi\n#+end_src\n")
    (notes / "setup").mkdir()
    (notes / "setup" / "common.setup").write_text("#+PROPERTY: header-args :tangle inside.sh\n")
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    try:
        answer = handle(ctx, json.dumps({"op": "tangle_plan", "files": ["t.org"]}))
    finally:
        ctx.close()
    assert [t["target"] for t in answer["result"]["targets"]] == ["inside.sh"]


def test_the_owner_on_the_command_line_follows_a_setupfile_as_emacs_does(notes: Path, cli) -> None:
    (notes / "t.org").write_text("#+SETUPFILE: ../outside/setup.org\n* Block\n#+begin_src sh\necho hi\n#+end_src\n")
    result = cli("tangle", str(notes / "t.org"), "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    assert [Path(t["target"]).name for t in json.loads(result.stdout)["targets"]] == [f"{MARK}-outside.sh"]


def test_no_team_server_answer_holds_a_file_a_note_points_at(notes: Path, tmp_path: Path, tiny_model_dir) -> None:
    from tiny_model import MODEL_NAME

    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")} | {
        "ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    token = orgkit(notes, env, "token", "add", "reader-1", "--role", "reader")["token"]
    server = HttpServer(notes, env)
    try:
        answers = [server.op(r["op"], token, **{k: v for k, v in r.items() if k != "op"}) for r in REQUESTS]
    finally:
        server.close()
    assert [a.status_code for a in answers if a.status_code >= 500] == []
    assert [a.text for a in answers if not _clean(a.text)] == []

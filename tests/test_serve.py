"""`orgkit serve`: one JSON response per request line, errors included, in a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_notes
from test_index import NOTES


@pytest.fixture
def server(tmp_path: Path, tiny_model: Path):
    notes = write_notes(tmp_path / "notes", NOTES)
    proc = subprocess.Popen([sys.executable, "-c", "from orgkit.cli import main; main()", "serve",
                             "--recheck-after", "0", "--notes", str(notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())

    def ask(request: dict | str) -> dict:
        line = request if isinstance(request, str) else json.dumps(request)
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    ask.notes = notes  # type: ignore[attr-defined]
    yield ask
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


def test_bad_requests_get_errors_and_the_server_goes_on(server) -> None:
    assert "not JSON" in server("{nope")["error"]
    assert "JSON object" in server("[1, 2]")["error"]
    assert "unknown op" in server({"op": "fly"})["error"]
    assert "'query'" in server({"op": "search"})["error"]
    assert "'limit'" in server({"op": "search", "query": "cats", "limit": "ten"})["error"]
    assert "'mode'" in server({"op": "search", "query": "cats", "mode": "sideways"})["error"]
    assert "unknown ID" in server({"op": "read", "ids": ["nope"]})["error"]
    assert "unknown ID" in server({"op": "backlinks", "id": "nope"})["error"]
    answer = server({"op": "search", "query": "compost", "request": 7})
    assert answer["request"] == 7 and answer["result"][0]["id"] == "tomatoes"


def test_every_op_answers_like_its_command(server) -> None:
    assert {n["id"] for n in server({"op": "nodes"})["result"]} == {"cats", "kittens", "dogs", "tomatoes"}
    assert server({"op": "links", "id": "dogs"})["result"] == [
        {"source": "dogs", "dest": "cats", "type": "id", "pos": server({"op": "links", "id": "dogs"})
         ["result"][0]["pos"]}]
    assert server({"op": "backlinks", "id": "dogs"})["result"][0]["source"] == "cats"
    assert server({"op": "scan", "query": "kittens"})["result"][0]["id"] == "kittens"
    docs = server({"op": "read", "ids": ["cats"], "depth": 1})["result"]
    assert [d["id"] for d in docs] == ["cats", "dogs"]
    context = server({"op": "context", "query": "loyal canine", "budget": 500})["result"]
    assert context["included"][0]["id"] == "dogs"
    for mode in ("lexical", "dense", "hybrid"):
        assert server({"op": "search", "query": "loyal canine", "mode": mode})["result"][0]["id"] == "dogs"


def test_changed_files_are_noticed_before_each_query(server) -> None:
    assert server({"op": "search", "query": "goldfish", "mode": "lexical"})["result"] == []
    write_notes(server.notes, {"fish.org": ":PROPERTIES:\n:ID: fish\n:END:\n#+title: Fish\n\nGoldfish swim.\n"})
    assert server({"op": "search", "query": "goldfish"})["result"][0]["id"] == "fish"
    (server.notes / "fish.org").unlink()
    assert server({"op": "search", "query": "goldfish", "mode": "lexical"})["result"] == []


def test_skill_op_runs_each_stage_with_the_warm_model(server) -> None:
    symbolic = server({"op": "skill", "name": "atomic-notes", "query": "loyal canine"})["result"]
    assert symbolic["stage"] == "symbolic"
    assert symbolic["candidates"][0]["id"] == "dogs"
    assert "search" in symbolic["candidates"][0]["sources"]
    prompt = server({"op": "skill", "name": "atomic-notes", "query": "loyal canine",
                     "stage": "neuro"})["result"]
    assert "dogs" in prompt["text"] and prompt["reply_format"]["required"] == ["read"]
    read = server({"op": "skill", "name": "atomic-notes", "query": "loyal canine", "stage": "read",
                   "reply": {"read": ["dogs"]}})["result"]
    assert read["notes"][0]["id"] == "dogs"
    assert "unknown skill" in server({"op": "skill", "name": "nope", "query": "x"})["error"]
    assert "'reply'" in server({"op": "skill", "name": "atomic-notes", "query": "x",
                                "stage": "read", "reply": [1]})["error"]

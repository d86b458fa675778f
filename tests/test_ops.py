"""The operation registry: declarations, one validation, JSON Schemas, the CLI made from it, config."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import jsonschema
import pytest

from conftest import write_notes
from orgkit.roles import STDIO
from orgkit.cli import main
from orgkit.config import SETTINGS
from orgkit.ops import OpContext, ParamError, call, get, registry, validate
from orgkit.serve import handle
from test_index import NOTES, assert_same_index, dump


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def test_every_operation_declares_a_valid_json_schema() -> None:
    for op in registry().values():
        schema = op.schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        assert op.description and op.result, op.name
        for param in op.params:
            assert param.help, f"{op.name}.{param.name} has no help"
            if param.default is not None:
                jsonschema.validate({param.name: param.default, **_required_values(op)}, schema)


def _required_values(op) -> dict:
    samples = {"string": "x", "path": "x", "array": ["x"], "integer": 1, "number": 1.0, "object": {}}
    return {p.name: samples[p.type] for p in op.params if p.required}


@pytest.mark.parametrize("given, message", [
    ({"query": "x", "limit": "ten"}, "'limit' must be an integer, not \"ten\""),
    ({"query": "x", "limit": 0}, "'limit' must be an integer of at least 1, not 0"),
    ({"query": "x", "limit": True}, "'limit' must be an integer, not true"),
    ({"query": "x", "mode": "sideways"}, "'mode' must be one of hybrid, dense, lexical, not \"sideways\""),
    ({"query": 5}, "'query' must be a string, not 5"),
    ({}, "'query' is required (a string)"),
    ({"query": "x", "colour": "red"}, "unknown field 'colour' for search (fields: query, limit, mode, min_score, "
     "scope, exact, tag, folder, todo, since, until, no_update)"),
])
def test_validation_names_the_field_and_its_type(given: dict, message: str) -> None:
    with pytest.raises(ParamError) as caught:
        validate(get("search"), given)
    assert str(caught.value) == message


def test_validation_fills_defaults_and_reads_command_line_text() -> None:
    assert validate(get("search"), {"query": "cats"}) == {"query": "cats", "limit": 10, "mode": "hybrid",
                                                          "min_score": None, "scope": None, "exact": False,
                                                          "tag": None, "folder": None, "todo": None, "since": None,
                                                          "until": None, "no_update": False}
    assert validate(get("search"), {"query": "cats", "limit": "3"}, from_text=True)["limit"] == 3
    assert validate(get("new"), {"title": "t", "tags": "a, b"}, from_text=True)["tags"] == ["a", "b"]
    assert validate(get("skills_run"), {"name": "n", "query": "q", "reply": '{"read": []}'},
                    from_text=True)["reply"] == {"read": []}
    with pytest.raises(ParamError, match="'ids' must be a list of strings, not 5"):
        validate(get("read"), {"ids": 5})
    with pytest.raises(ParamError, match="'ids' must be a non-empty list of strings"):
        validate(get("read"), {"ids": []})
    with pytest.raises(ParamError, match="exactly one of 'line' and 'all'"):
        validate(get("id_add"), {"file": "x.org"})
    assert get("skill") is get("skills_run")  # the older serve name still answers


def _cli_commands() -> dict[tuple[str, ...], click.Command]:
    ctx = click.Context(main)
    out = {}
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        if isinstance(command, click.Group):
            out.update({(name, sub): command.get_command(ctx, sub) for sub in command.list_commands(ctx)})
        else:
            out[(name,)] = command
            out.update({(name, sub): made for sub, made in getattr(command, "subcommands", {}).items()})
    return out


def test_every_operation_is_a_command_with_the_registry_parameters(monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")  # every capability on: every operation listed
    commands = _cli_commands()
    for op in registry().values():
        if op.command is None:
            assert op.mcp, f"{op.name} is offered nowhere but serve"
            continue
        command = commands[op.command]
        names = {p.name for p in command.params}
        assert {p.name for p in op.params} <= names, op.name
        assert names - {p.name for p in op.params} <= {"notes_dir", "state_dir", "as_json", "help"}
        for param in op.params:
            (cli_param,) = [p for p in command.params if p.name == param.name]
            assert isinstance(cli_param, click.Argument) == param.positional, f"{op.name}.{param.name}"
            if not param.positional:
                assert param.option in cli_param.opts
    assert set(commands) - {op.command for op in registry().values()} == {("serve",), ("mcp",)}


def test_ops_json_and_the_serve_op_list_the_registry(cli, notes: Path, monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")  # every capability on: every operation listed
    listed = json.loads(cli("ops", "--json").stdout)
    assert [o["name"] for o in listed] == list(registry())
    search = next(o for o in listed if o["name"] == "search")
    assert search["parameters"] == get("search").schema() and search["writes"] is False
    assert search["returns"] == get("search").output_schema()
    assert search["positional"] == ["query"]
    ctx = OpContext(notes, warm=True)
    served = handle(ctx, '{"op": "ops"}')["result"]
    # The same registry, but what only the command line can use is absent from the server's listing.
    assert [o["name"] for o in served] == [o["name"] for o in listed]
    deposit = {o["name"]: o for o in listed}["deposit"], {o["name"]: o for o in served}["deposit"]
    assert "body_file" in deposit[0]["parameters"]["properties"] and "body_file" in deposit[0]["options"]
    assert "body_file" not in deposit[1]["parameters"]["properties"] and "body_file" not in deposit[1]["options"]
    assert [o for o in served if o["name"] != "deposit"] == [o for o in listed if o["name"] != "deposit"]
    assert "search" in cli("ops").stdout


def test_serve_names_the_field_of_a_wrongly_typed_request(notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    assert handle(ctx, '{"op": "search", "query": "x", "limit": "x"}') == {
        "error": "'limit' must be an integer, not \"x\""}
    assert handle(ctx, '{"op": "read", "ids": 5, "request": 3}') == {
        "error": "'ids' must be a list of strings, not 5", "request": 3}
    assert handle(ctx, '{"op": "scan", "query": "cats", "limti": 2}')["error"].startswith("unknown field 'limti'")


def test_read_of_known_and_unknown_ids_is_the_same_everywhere(cli, notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    answer = handle(ctx, '{"op": "read", "ids": ["cats", "nope"]}')
    assert [d["id"] for d in answer["result"]] == ["cats"]
    assert answer["errors"] == ["unknown ID: nope"]
    result = cli("read", "cats", "nope", "--notes", str(notes), "--json")
    assert result.exit_code == 1 and json.loads(result.stdout) == answer["result"]
    assert "orgkit: error: unknown ID: nope" in result.stderr
    assert handle(ctx, '{"op": "read", "ids": ["nope"]}') == {"error": "unknown ID: nope"}


def test_skills_run_uses_the_configured_state_dir(cli, notes: Path, tmp_path: Path, tiny_model: Path) -> None:
    state = tmp_path / "elsewhere"
    result = cli("skills", "run", "atomic-notes", "--query", "loyal canine", "--notes", str(notes), "--json",
                 env={"ORGKIT_STATE_DIR": str(state)})
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["candidates"][0]["id"] == "dogs"
    assert (state / "index.sqlite").is_file() and not (notes / ".orgkit").exists()


def test_config_shows_each_value_with_its_origin(cli, notes: Path, tmp_path: Path) -> None:
    (notes / "orgkit.toml").write_text('model = "from-file"\n[search]\ninline_embed_limit = 7\n')
    result = cli("config", "--notes", str(notes), "--state-dir", str(tmp_path / "s"), "--json",
                 env={"ORGKIT_MODEL_PATH": str(tmp_path / "m"), "ORGKIT_MODEL": None, "ORGKIT_STATE_DIR": None})
    values = json.loads(result.stdout)
    assert set(values) == {"notes", *SETTINGS}
    assert values["notes"] == {"value": str(notes), "origin": "flag --notes", "kind": "trust"}
    assert values["state_dir"] == {"value": str(tmp_path / "s"), "origin": "flag", "kind": "inside"}
    assert values["model_path"] == {"value": str(tmp_path / "m"), "origin": "env ORGKIT_MODEL_PATH", "kind": "trust"}
    assert values["model"]["origin"] == f"file {notes / 'orgkit.toml'}"
    assert values["search.inline_embed_limit"]["value"] == 7
    assert values["data_dir"] == {"value": str(notes / "orgkit-data"), "origin": "default", "kind": "inside"}
    text = cli("config", "--notes", str(notes), env={"ORGKIT_MODEL": None}).stdout
    assert f"file {notes / 'orgkit.toml'}" in text and 'model = "from-file"' in text


def test_a_bad_config_file_is_a_one_line_error(cli, notes: Path) -> None:
    (notes / "orgkit.toml").write_text("modle = 1\n")
    result = cli("search", "cats", "--notes", str(notes))
    assert result.exit_code == 1 and "unknown key 'modle'" in result.stderr
    # ... except for `orgkit config` itself, where the error sends the user: the known keys and the bad one.
    result = cli("config", "--notes", str(notes), "--json")
    assert result.exit_code == 0 and set(json.loads(result.stdout)) == {"notes", *SETTINGS}
    assert result.stderr.strip() == (f"orgkit: warning: {notes / 'orgkit.toml'}: unknown key 'modle' "
                                     "(see `orgkit config` for the keys)")


def test_deleting_the_state_dir_and_indexing_again_loses_nothing(cli, notes: Path, tiny_model: Path) -> None:
    from orgkit.index import Index

    assert cli("index", "--notes", str(notes)).exit_code == 0
    state = notes / ".orgkit"
    assert (state / ".gitignore").read_text().strip().endswith("*")
    before = dump(Index.at(notes, state))
    search = json.loads(cli("search", "loyal canine", "--notes", str(notes), "--json").stdout)
    shutil.rmtree(state)
    assert cli("index", "--notes", str(notes)).exit_code == 0
    assert_same_index(dump(Index.at(notes, state)), before)
    assert json.loads(cli("search", "loyal canine", "--notes", str(notes), "--json").stdout) == search
    assert (state / ".gitignore").is_file()


def test_a_one_shot_read_builds_no_index(cli, notes: Path) -> None:
    assert cli("read", "cats", "--notes", str(notes), "--json").exit_code == 0
    assert not (notes / ".orgkit").exists()


def test_each_call_on_a_context_has_its_own_warnings(notes: Path) -> None:
    ctx = OpContext(notes, warm=True)
    first = call(ctx, "read", {"ids": ["cats", "nope"]}, identity=STDIO)
    second = call(ctx, "read", {"ids": ["dogs"]}, identity=STDIO)
    assert first.errors == ["unknown ID: nope"] and first.failed
    assert second.errors == [] and not second.failed

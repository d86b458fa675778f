"""`orgkit mcp` through the MCP SDK's own client: in-process, and over stdio in a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from conftest import shared_path, write_notes
from orgkit.mcp import build_server
from orgkit.ops import OpContext, registry
from test_index import NOTES

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def warm_context(notes: Path) -> OpContext:
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root
    return ctx


def in_process(notes: Path, scenario) -> object:
    """Run `scenario(client, ctx)` against an in-process server over `notes`."""
    ctx = warm_context(notes)

    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            return await scenario(client, ctx)

    return anyio.run(main)


def answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def test_tools_come_from_the_registry_with_schemas_and_annotations(notes: Path) -> None:
    async def scenario(client, ctx):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in in_process(notes, scenario)}
    for name in ("scan", "search", "read", "context", "nodes", "links", "backlinks", "tangle_plan",
                 "skills_list", "skills_run", "skills_prompt", "new"):
        op = registry()[name]
        assert tools[name].input_schema == op.schema()
        assert tools[name].description.startswith(op.description)
        assert tools[name].annotations.read_only_hint is (not op.writes)
    assert tools["tangle_plan"].input_schema["properties"]["check"]["type"] == "boolean"
    assert tools["new"].annotations.read_only_hint is False
    # Nothing that writes files outside the notes, or edits files by path, is an agent's tool.
    assert not {"ops", "tangle", "detangle", "id_add"} & set(tools)


def test_tool_failures_are_tool_errors_and_the_server_goes_on(notes: Path) -> None:
    async def scenario(client, ctx):
        bad_type = await client.call_tool("search", {"query": "cats", "limit": "x"})
        unknown = await client.call_tool("backlinks", {"id": "nope"})
        no_tool = await client.call_tool("fly", {})
        partial = await client.call_tool("read", {"ids": ["cats", "nope"]})
        good = await client.call_tool("scan", {"query": "kittens"})
        return bad_type, unknown, no_tool, partial, good

    bad_type, unknown, no_tool, partial, good = in_process(notes, scenario)
    assert bad_type.is_error and bad_type.content[0].text == "'limit' must be an integer, not \"x\""
    assert unknown.is_error and "unknown ID: nope" in unknown.content[0].text
    assert no_tool.is_error and "unknown tool 'fly'" in no_tool.content[0].text
    data = answer(partial)
    assert [d["id"] for d in data["result"]] == ["cats"] and data["errors"] == ["unknown ID: nope"]
    assert answer(good)["result"][0]["id"] == "kittens"


def test_skills_are_prompts_and_notes_are_resources(notes: Path, tiny_model: Path) -> None:
    async def scenario(client, ctx):
        prompts = (await client.list_prompts()).prompts
        prompt = await client.get_prompt("atomic-notes", {"query": "loyal canine"})
        templates = (await client.list_resource_templates()).resource_templates
        resources = (await client.list_resources()).resources
        note = await client.read_resource("orgkit://node/dogs")
        with pytest.raises(MCPError, match="unknown ID: nope"):
            await client.read_resource("orgkit://node/nope")
        return prompts, prompt, templates, resources, note

    prompts, prompt, templates, resources, note = in_process(notes, scenario)
    assert [p.name for p in prompts] == ["atomic-notes"] and prompts[0].arguments[0].name == "query"
    assert "dogs" in prompt.messages[0].content.text
    assert templates[0].uri_template == "orgkit://node/{id}"
    assert {str(r.uri) for r in resources} == {f"orgkit://node/{i}" for i in ("cats", "kittens", "dogs", "tomatoes")}
    assert note.contents[0].text.startswith(":PROPERTIES:\n:ID:       dogs\n")


def test_a_search_before_the_model_is_ready_ranks_by_words_and_says_so(notes: Path, tiny_model: Path) -> None:
    async def scenario(client, ctx):
        ctx.held.model_ready.clear()  # as while the background thread loads the model
        early = answer(await client.call_tool("search", {"query": "compost"}))
        ctx.held.model_ready.set()
        late = answer(await client.call_tool("search", {"query": "loyal canine", "mode": "dense"}))
        return early, late

    early, late = in_process(notes, scenario)
    assert early["result"][0]["id"] == "tomatoes"
    assert any("still loading" in w and "words only" in w for w in early["warnings"])
    assert late["result"][0]["id"] == "dogs" and not any("still loading" in w for w in late["warnings"])


def _stdio(notes: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=ORGKIT[0], args=[*ORGKIT[1:], "mcp", "--notes", str(notes), *extra],
                                 env=dict(os.environ))


def _sdk_import_seconds() -> float:
    """What importing the MCP SDK alone costs on this machine now (a loaded machine is slower)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], check=True)
    return time.perf_counter() - started


def test_stdio_server_answers_initialize_at_once_on_a_never_indexed_dir(notes: Path, tiny_model: Path) -> None:
    async def main():
        started = time.perf_counter()
        async with Client(_stdio(notes)) as client:
            initialized = time.perf_counter() - started
            tools = {t.name for t in (await client.list_tools()).tools}
            found = answer(await client.call_tool("search", {"query": "compost"}))
            bad = await client.call_tool("read", {"ids": 5})
            still = answer(await client.call_tool("read", {"ids": ["dogs"]}))
        return initialized, tools, found, bad, still

    baseline = _sdk_import_seconds()
    initialized, tools, found, bad, still = anyio.run(main)
    print(f"initialize answered {initialized:.2f} s after spawn (SDK import alone: {baseline:.2f} s)")
    # Nothing of orgkit's own (index, model) is loaded before the answer: on an idle machine it
    # comes in well under 2 s; when the machine is loaded, the SDK's import alone sets the pace.
    assert initialized < max(2.0, baseline + 1.0)
    assert {"scan", "search", "read", "context", "nodes", "links", "backlinks", "tangle_plan"} <= tools
    assert found["result"][0]["id"] == "tomatoes"
    assert bad.is_error and bad.content[0].text == "'ids' must be a list of strings, not 5"
    assert still["result"][0]["id"] == "dogs"


def test_stdio_search_and_read_on_braindump_match_the_cli(tmp_path: Path, tiny_model: Path, cli) -> None:
    notes = shared_path("corpora", "braindump")
    state = tmp_path / "state"
    env = {"ORGKIT_STATE_DIR": str(state)}
    query = "zettelkasten note taking"
    # Embed everything first: a search answers at once from what is embedded, so both
    # surfaces must see the same fully embedded index to give the same answer.
    cli("index", "--quiet", "--notes", str(notes), env=env)
    want_search = json.loads(cli("search", query, "--notes", str(notes), "--json", env=env).stdout)
    some_id = want_search[0]["id"]
    want_read = json.loads(cli("read", some_id, "--depth", "1", "--notes", str(notes), "--json", env=env).stdout)

    async def main():
        params = _stdio(notes)
        params.env["ORGKIT_STATE_DIR"] = str(state)
        async with Client(params) as client:
            for _ in range(200):  # until the background warm-up is done
                found = answer(await client.call_tool("search", {"query": query}))
                if not any("still loading" in w for w in found["warnings"]):
                    break
                await anyio.sleep(0.1)
            read = answer(await client.call_tool("read", {"ids": [some_id], "depth": 1}))
        return found, read

    found, read = anyio.run(main)
    assert found["result"] == want_search
    assert read["result"] == want_read


def test_tangle_plan_lists_targets_and_writes_nothing(notes: Path) -> None:
    write_notes(notes, {"code.org": "#+begin_src python :tangle out/hello.py :mkdirp yes\nprint('hi')\n#+end_src\n"})

    async def scenario(client, ctx):
        plan = answer(await client.call_tool("tangle_plan", {"files": ["code.org"]}))
        check = answer(await client.call_tool("tangle_plan", {"files": ["code.org"], "check": True}))
        missing = await client.call_tool("tangle_plan", {"files": ["nope.org"]})
        return plan, check, missing

    plan, check, missing = in_process(notes, scenario)
    (target,) = plan["result"]["targets"]
    assert (target["target"], target["file"], plan["result"]["written"]) == ("out/hello.py", "code.org", False)
    assert not (notes / "out").exists()
    assert check["result"]["ok"] is False and check["result"]["stale"][0]["target"] == "out/hello.py"
    assert missing.is_error and missing.content[0].text == "nope.org: no such file"


def test_review_decisions_are_tools_only_when_allowed(notes: Path, monkeypatch) -> None:
    async def scenario(client, ctx):
        names = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("review_accept", {"ids": ["x"]})
        return names, refused

    monkeypatch.delenv("ORGKIT_MCP_ALLOW_REVIEW", raising=False)
    names, refused = in_process(notes, scenario)
    assert "review_show" in names and not {"review_accept", "review_reject", "review_undo"} & names
    assert refused.is_error and "mcp.allow_review = true" in refused.content[0].text
    monkeypatch.setenv("ORGKIT_MCP_ALLOW_REVIEW", "1")
    names, allowed = in_process(notes, scenario)
    assert {"review_accept", "review_reject", "review_undo"} <= names
    assert "mcp.allow_review" not in allowed.content[0].text


def test_operations_of_a_disabled_capability_are_not_tools(notes: Path, monkeypatch) -> None:
    async def scenario(client, ctx):
        return {t.name for t in (await client.list_tools()).tools}, await client.call_tool("schema_list", {})

    monkeypatch.delenv("ORGKIT_EXTRACTION", raising=False)
    names, refused = in_process(notes, scenario)
    assert "schema_list" not in names
    assert refused.is_error and "capability, which is off" in refused.content[0].text
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    names, listed = in_process(notes, scenario)
    assert "schema_list" in names and not listed.is_error


def test_answers_are_structured_link_their_notes_and_report_progress(notes: Path, tiny_model: Path) -> None:
    """The SDK's client validates search and recall against their outputSchema, opens a note
    that context links to, and hears index's progress."""
    import jsonschema

    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, total, message))

    async def scenario(client, ctx):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("search", {"query": "loyal canine"})
        recalled = await client.call_tool("recall", {"query": "loyal canine"})
        gathered = await client.call_tool("context", {"query": "loyal canine"})
        links = [c for c in gathered.content if c.type == "resource_link"]
        opened = await client.read_resource(str(links[0].uri))
        indexed = await client.call_tool("index", {"rebuild": True}, progress_callback=on_progress)
        return listed, found, recalled, gathered, links, opened, indexed

    listed, found, recalled, gathered, links, opened, indexed = in_process(notes, scenario)
    for name, result in (("search", found), ("recall", recalled)):
        schema = listed[name].output_schema
        assert schema == registry()[name].output_schema() and schema["type"] == "object"
        jsonschema.Draft202012Validator(schema).validate(result.structured_content)
        assert answer(result) == result.structured_content
    assert found.structured_content["result"][0]["id"] == "dogs"
    assert recalled.structured_content["result"]["included"][0]["id"] == "dogs"
    assert [c.type for c in found.content] == ["text"]  # search names notes in its result only
    included = [n["id"] for n in answer(gathered)["result"]["included"]]
    assert [str(link.uri) for link in links] == [f"orgkit://node/{i}" for i in dict.fromkeys(included)]
    assert links[0].name == "Dogs" and opened.contents[0].text.startswith(f":PROPERTIES:\n:ID:       {included[0]}\n")
    assert answer(indexed)["result"]["embedded"] > 0
    assert heard and heard[-1][0] == heard[-1][1] and "passage texts" in heard[-1][2]
    assert listed["index"].annotations.idempotent_hint and not listed["index"].annotations.read_only_hint
    assert listed["search"].annotations.read_only_hint and not listed["new"].annotations.destructive_hint


def test_every_declared_result_shape_reads_as_a_json_schema() -> None:
    """The registry's result notation, read into the schemas MCP publishes."""
    import jsonschema

    from orgkit.ops.results import NotationError, result_schema

    for op in registry().values():
        jsonschema.Draft202012Validator.check_schema(op.output_schema())
    assert result_schema("[{id, line, passages?: [{line}], ...}]") == {"type": "array", "items": {
        "type": "object", "required": ["id", "line"], "properties": {
            "id": {"type": ["string", "null"]}, "line": {"type": ["integer", "null"]},
            "passages": {"type": "array", "items": {"type": "object", "required": ["line"],
                                                      "properties": {"line": {"type": ["integer", "null"]}}}}}}}
    config = result_schema("{KEY: {value, refused?}}")
    assert config["additionalProperties"]["required"] == ["value"]
    plan = result_schema("{written, targets: [{file}]} (check: {ok, stale})")
    jsonschema.validate({"ok": False, "stale": []}, plan)
    jsonschema.validate({"written": True, "targets": [{"file": "a.org"}]}, plan)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"written": True}, plan)
    with pytest.raises(NotationError):
        result_schema("{id, [")

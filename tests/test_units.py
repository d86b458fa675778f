"""Any org folder is searchable: files and headings without an ID are units, opened by their locator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import write_notes
from test_mcp import answer, in_process

PLAIN = {
    "projects/bread.org": """
        #+title: Bread
        Notes on baking at home.
        * Sourdough starter :kitchen:
        Feed the starter with rye flour and water every morning.
        ** TODO Buy a proofing basket
        A round banneton for the boule.
        * Oven
        Bake at 250 degrees with steam for the first twenty minutes.
        * Oven
        A second heading of the same title, about a pizza stone.
        """,
    "agenda.org": """
        * Dentist appointment
        Tuesday at nine, bring the insurance card.
        """,
    "roam.org": """
        :PROPERTIES:
        :ID:       roam-node
        :END:
        #+title: A roam note
        * Inside the node
        Compost turns faster with shredded leaves.
        """,
}


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", PLAIN)


def run_json(cli, *args: str):
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_an_id_less_folder_is_indexed_and_searchable(cli, plain: Path) -> None:
    stats = run_json(cli, "index", "--no-embed", "--notes", str(plain))
    assert stats["indexed"] == {"files": 3, "files_with_id": 1, "files_without_id": 2,
                                "headings_with_id": 0, "headings_without_id": 5}
    hits = run_json(cli, "search", "rye flour starter", "--mode", "lexical", "--notes", str(plain))
    top = hits[0]
    assert (top["id"], top["locator"], top["file"], top["line"], top["olp"]) == (
        None, "projects/bread.org::*Sourdough starter", "projects/bread.org", 3, [])
    task = run_json(cli, "search", "banneton", "--mode", "lexical", "--notes", str(plain))[0]
    assert task["locator"] == "projects/bread.org::*Buy a proofing basket"
    # the scan names a headline as search does
    assert [h["locator"] for h in run_json(cli, "scan", "oven", "--notes", str(plain))] == [
        "projects/bread.org::7", "projects/bread.org::9"]
    assert run_json(cli, "scan", "proofing", "--notes", str(plain))[0]["locator"] == task["locator"]
    assert task["olp"] == ["Sourdough starter"]
    # a title two headings share is located by line; a file's own text by the file
    assert run_json(cli, "search", "pizza stone", "--mode", "lexical", "--notes", str(plain))[0]["locator"] == \
        "projects/bread.org::9"
    assert run_json(cli, "search", "insurance card", "--mode", "lexical", "--notes", str(plain))[0]["locator"] == \
        "agenda.org::*Dentist appointment"
    # org-roam's nodes stay org-roam's: a unit is no node, and an ID is the handle where there is one
    assert [n["id"] for n in run_json(cli, "nodes", "--notes", str(plain))] == ["roam-node"]
    assert run_json(cli, "search", "shredded leaves", "--mode", "lexical", "--notes", str(plain))[0]["id"] == \
        "roam-node"
    assert "indexed 3 files (2 without an ID)" in cli("index", "--no-embed", "--notes", str(plain)).stdout


def test_a_locator_opens_with_read_and_context(cli, plain: Path) -> None:
    run_json(cli, "index", "--no-embed", "--notes", str(plain))
    docs = run_json(cli, "read", "projects/bread.org::*sourdough STARTER", "projects/bread.org::10",
                    "projects/bread.org", "--notes", str(plain))
    assert [(d["id"], d["locator"], d["line"]) for d in docs] == [
        (None, "projects/bread.org::*Sourdough starter", 3), (None, "projects/bread.org::9", 9),
        (None, "projects/bread.org", 1)]
    assert docs[0]["content"].startswith("* Sourdough starter :kitchen:\nFeed the starter")
    assert "banneton" in docs[0]["content"] and "Oven" not in docs[0]["content"]
    assert run_json(cli, "read", "roam.org::6", "--notes", str(plain))[0]["id"] == "roam-node"  # the node around it
    found = run_json(cli, "context", "dentist appointment insurance", "--budget", "300", "--notes", str(plain))
    assert found["included"][0]["locator"] == "agenda.org::*Dentist appointment"
    assert found["included"][0]["content"].startswith("* Dentist appointment")
    missing = cli("read", "projects/bread.org::*No such heading", "--notes", str(plain))
    assert missing.exit_code == 1 and "unknown ID" in missing.stderr


def test_links_of_a_locator_say_that_only_nodes_with_an_id_have_id_links(cli, plain: Path) -> None:
    said = ("orgkit: error: projects/bread.org::*Sourdough starter is a locator, not an ID: id links lead to "
            "and from nodes with an ID only (`orgkit id add` gives one)")
    for indexed in (False, True):  # from the files, then from the index
        if indexed:
            run_json(cli, "index", "--no-embed", "--notes", str(plain))
        for command in ("links", "backlinks"):
            result = cli(command, "projects/bread.org::*Sourdough starter", "--notes", str(plain))
            assert result.exit_code == 1 and result.stderr.strip() == said
        assert "unknown ID: nope" in cli("backlinks", "nope", "--notes", str(plain)).stderr


def test_a_locator_cannot_lead_outside_the_notes(cli, plain: Path, tmp_path: Path) -> None:
    outside = write_notes(tmp_path / "outside", {"secret.org": "* Secret\nthe password\n"})
    (plain / "link.org").symlink_to(outside / "secret.org")
    (plain / "linked").symlink_to(outside)
    for locator in ("../outside/secret.org", str(outside / "secret.org"), "link.org::*Secret",
                    "linked/secret.org", "projects/../../outside/secret.org::1", "~/secret.org"):
        refused = cli("read", locator, "--notes", str(plain))
        assert refused.exit_code == 1, locator
        assert "password" not in refused.stdout + refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1


def test_serve_and_mcp_find_and_open_units(plain: Path, tiny_model: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "from orgkit.cli import main; main()", "serve",
                             "--recheck-after", "0", "--notes", str(plain)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())

    def ask(request: dict) -> dict:
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        hit = ask({"op": "search", "query": "banneton proofing basket", "mode": "lexical"})["result"][0]
        assert hit["locator"] == "projects/bread.org::*Buy a proofing basket"
        doc = ask({"op": "read", "ids": [hit["locator"]]})["result"][0]
        assert doc["content"].startswith("** TODO Buy a proofing basket")
        assert "error" in ask({"op": "read", "ids": ["/etc/passwd.org"]})
        assert "error" in ask({"op": "read", "ids": ["../notes/agenda.org"]})
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0

    async def scenario(client, ctx):
        found = answer(await client.call_tool("search", {"query": "dentist insurance", "mode": "lexical"}))
        locator = found["result"][0]["locator"]
        read = await client.call_tool("read", {"ids": [locator]})
        templates = (await client.list_resource_templates()).resource_templates
        resource = await client.read_resource("orgkit://unit/" + quote(locator, safe="/"))
        return locator, read, templates, resource

    locator, read, templates, resource = in_process(plain, scenario)
    assert locator == "agenda.org::*Dentist appointment"
    assert answer(read)["result"][0]["locator"] == locator
    assert str(read.content[-1].uri) == "orgkit://unit/agenda.org%3A%3A%2ADentist%20appointment"
    assert "orgkit://unit/{locator}" in {t.uri_template for t in templates}
    assert resource.contents[0].text.startswith("* Dentist appointment")

"""Filters on search, scan and context (every surface), read by title or alias, and recent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import write_notes
from test_http import HttpServer
from test_mcp import answer, in_process

NOTES = {
    "work/plan.org": """
        #+title: Plan
        #+filetags: :work:
        * TODO Write the compost report
        Compost piles need turning every week.
        * DONE Order compost bins
        Two bins of compost arrived.
        """,
    "home/garden.org": """
        :PROPERTIES:
        :ID:       garden
        :ROAM_ALIASES: "Vegetable patch"
        :END:
        #+title: Garden
        Compost from kitchen scraps feeds the beds.
        """,
    "home/old.org": """
        * Compost in the old house
        An old compost heap behind the shed.
        """,
    "twins/a.org": "#+title: Twin\nOne of two notes with this title.\n",
    "twins/b.org": "#+title: Twin\nThe other one.\n",
}
OLD = time.time() - 30 * 86400  # a month ago


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "notes", NOTES)
    os.utime(root / "home/old.org", (OLD, OLD))
    return root


def run_json(cli, *args: str):
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def files(rows: list[dict]) -> set[str]:
    return {r["file"] for r in rows}


def test_filters_on_search_scan_and_context_from_the_command_line(cli, notes: Path) -> None:
    run_json(cli, "index", "--no-embed", "--notes", str(notes))
    search = ("search", "compost", "--mode", "lexical", "--notes", str(notes))
    assert files(run_json(cli, *search)) == {"work/plan.org", "home/garden.org", "home/old.org"}
    assert files(run_json(cli, *search, "--tag", "WORK")) == {"work/plan.org"}
    assert [h["title"] for h in run_json(cli, *search, "--todo", "done")] == ["Order compost bins"]
    assert files(run_json(cli, *search, "--folder", "home")) == {"home/garden.org", "home/old.org"}
    assert files(run_json(cli, *search, "--folder", "home/g*.org")) == {"home/garden.org"}
    assert files(run_json(cli, *search, "--folder", "./home/")) == {"home/garden.org", "home/old.org"}
    assert files(run_json(cli, *search, "--folder", ".")) == files(run_json(cli, *search))  # the whole notes dir
    for outside in ("../home", "/tmp", "home/../.."):
        refused = cli(*search, "--folder", outside)
        assert refused.exit_code == 1 and refused.stderr.startswith(f"orgkit: error: --folder {outside!r} is ")
        assert len(refused.stderr.strip().splitlines()) == 1
    assert files(run_json(cli, *search, "--since", "7d")) == {"work/plan.org", "home/garden.org"}
    assert files(run_json(cli, *search, "--until", "14d")) == {"home/old.org"}
    assert run_json(cli, *search, "--tag", "work", "--folder", "home") == []
    for command in (search, ("scan", "compost", "--notes", str(notes)), ("recent", "--notes", str(notes))):
        mistyped = cli(*command, "--folder", "hoem")  # a path that names nothing is said to, not answered as empty
        assert mistyped.exit_code == 1 and mistyped.stderr.strip() == (
            "orgkit: error: --folder 'hoem' names nothing in the notes dir: give a folder inside it (projects) "
            "or a glob (projects/*.org)")
    assert run_json(cli, *search, "--folder", "hoem*") == []  # a glob may match nothing

    scan = ("scan", "compost", "--notes", str(notes))
    assert files(run_json(cli, *scan)) == {"work/plan.org", "home/old.org"}
    assert [h["title"] for h in run_json(cli, *scan, "--todo", "TODO", "--tag", "work")] == \
        ["Write the compost report"]
    assert files(run_json(cli, *scan, "--since", "2020-01-01", "--until", "14d")) == {"home/old.org"}

    context = run_json(cli, "context", "compost", "--folder", "work", "--notes", str(notes))
    assert files(context["included"]) == {"work/plan.org"}
    bad = cli(*search, "--since", "last tuesday")
    assert bad.exit_code == 1 and "--since 'last tuesday' is not a date" in bad.stderr
    crossed = cli(*search, "--since", "7d", "--until", "14d")
    assert crossed.exit_code == 1 and "--since '7d' is not before the until date '14d'" in crossed.stderr


def test_a_repeated_array_option_adds_to_it_rather_than_replacing_it(cli, notes: Path) -> None:
    run_json(cli, "index", "--no-embed", "--notes", str(notes))
    search = ("search", "compost", "--mode", "lexical", "--notes", str(notes))
    assert files(run_json(cli, *search, "--tag", "work", "--tag", "nowhere")) == set()  # both tags, not the last
    assert files(run_json(cli, *search, "--tag", "nowhere", "--tag", "work")) == set()
    assert files(run_json(cli, *search, "--tag", "work", "--tag", "WORK,work")) == {"work/plan.org"}
    made = run_json(cli, "new", "Bins", "--tags", "a", "--tags", "b,c", "--notes", str(notes))
    assert "#+filetags: :a:b:c:" in (notes / made["file"]).read_text()


def test_what_the_filters_left_out_is_named_when_nothing_passes_them(cli, notes: Path) -> None:
    """Nothing found within filters is not nothing in the notes: each command names the filters."""
    run_json(cli, "index", "--no-embed", "--notes", str(notes))
    only = " (only notes tagged :work:garden:, in home, in TODO state DONE)"
    narrowed = ("--tag", "work", "--tag", "garden", "--folder", "home", "--todo", "DONE", "--notes", str(notes))
    for command, said in ((("search", "compost", "--mode", "lexical"), "nothing in the notes matches 'compost'"),
                          (("scan", "compost"), "no headline, title or alias matches 'compost'"),
                          (("context", "compost"), "nothing in the notes is relevant to 'compost'")):
        result = cli(*command, *narrowed)
        assert result.exit_code == 0, result.stderr
        assert f"orgkit: warning: {said}{only}" in result.stderr.splitlines()
    assert cli("search", "compost", "--mode", "lexical", "--notes", str(notes)).stderr == ""
    unfiltered = cli("search", "sourdough", "--mode", "lexical", "--notes", str(notes))
    assert unfiltered.stderr.strip() == "orgkit: warning: nothing in the notes matches 'sourdough'"
    since = time.strftime("%Y-%m-%dT%H:%M", time.localtime(time.time() + 86400))
    later = cli("recent", "--folder", "home", "--since", since, "--notes", str(notes))
    assert later.exit_code == 0 and later.stdout == ""
    assert later.stderr.strip() == f"orgkit: warning: no note file (only notes in home, changed since {since})"


def test_scan_tag_filter_inherits_through_headings_without_an_id(cli, tmp_path: Path) -> None:
    root = write_notes(tmp_path / "notes", {"deep.org": """
        * Areas
        :PROPERTIES:
        :ID:       areas
        :END:
        ** Kitchen :home:
        *** Compost bin
        *** TODO Compost turning :weekly:
        """})
    scan = ("scan", "compost", "--notes", str(root))
    assert [h["title"] for h in run_json(cli, *scan, "--tag", "home")] == ["Compost bin", "Compost turning"]
    assert [h["title"] for h in run_json(cli, *scan, "--tag", "home", "--todo", "todo")] == ["Compost turning"]


def test_filters_reach_serve_mcp_and_http(notes: Path, tiny_model: Path, tiny_model_dir: Path) -> None:
    from orgkit.cli import main

    proc = subprocess.Popen([sys.executable, "-c", "from orgkit.cli import main; main()", "serve",
                             "--notes", str(notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        proc.stdin.write(json.dumps({"op": "search", "query": "compost", "mode": "lexical", "tag": ["work"]}) + "\n")
        proc.stdin.flush()
        assert files(json.loads(proc.stdout.readline())["result"]) == {"work/plan.org"}
        proc.stdin.write(json.dumps({"op": "scan", "query": "compost", "folder": "home"}) + "\n")
        proc.stdin.flush()
        assert files(json.loads(proc.stdout.readline())["result"]) == {"home/old.org"}
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0

    async def scenario(client, ctx):
        return answer(await client.call_tool("search", {"query": "compost", "mode": "lexical", "todo": "DONE"}))

    assert [h["title"] for h in in_process(notes, scenario)["result"]] == ["Order compost bins"]

    token = json.loads(CliRunner().invoke(main, ["token", "add", "r", "--role", "reader", "--notes", str(notes),
                                                 "--json"]).stdout)["token"]
    server = HttpServer(notes, os.environ.copy())
    try:
        found = server.op("context", token, query="compost", since="7d", folder="home")
        assert found.status_code == 200, found.text
        assert files(found.json()["result"]["included"]) == {"home/garden.org"}
    finally:
        server.close()


def test_read_by_title_or_alias_and_an_ambiguous_title(cli, notes: Path) -> None:
    run_json(cli, "index", "--no-embed", "--notes", str(notes))
    assert [d["id"] for d in run_json(cli, "read", "Garden", "--notes", str(notes))] == ["garden"]
    docs = run_json(cli, "read", "Vegetable patch", "--notes", str(notes))
    assert [d["id"] for d in docs] == ["garden"]
    heading = run_json(cli, "read", "Compost in the old house", "--notes", str(notes))[0]
    assert heading["locator"] == "home/old.org::*Compost in the old house"
    twins = cli("read", "Twin", "--notes", str(notes))
    assert twins.exit_code == 1
    assert twins.stderr.strip() == ("orgkit: error: 2 notes are titled 'Twin': twins/a.org (twins/a.org:1), "
                                    "twins/b.org (twins/b.org:1); read one by its ID or locator")
    assert cli("read", "No such title", "--notes", str(notes)).exit_code == 1
    # no title is the name exactly: the one note whose title or alias it is whatever the case
    for name in ("garden", "VEGETABLE PATCH"):
        assert [d["id"] for d in run_json(cli, "read", name, "--notes", str(notes))] == ["garden"]
    assert cli("read", "twin", "--notes", str(notes)).stderr.startswith("orgkit: error: 2 notes are titled 'twin': ")


def test_a_title_is_read_in_a_folder_never_indexed_and_an_id_builds_no_index(cli, notes: Path) -> None:
    from orgkit.config import load
    from orgkit.index import Index

    def indexed() -> bool:
        return Index.of(load(notes)).exists()

    assert [d["id"] for d in run_json(cli, "read", "garden", "--notes", str(notes))] == ["garden"]
    located = run_json(cli, "read", "home/old.org::*Compost in the old house", "--notes", str(notes))
    assert [d["title"] for d in located] == ["Compost in the old house"] and not indexed()
    assert [d["id"] for d in run_json(cli, "read", "Vegetable patch", "--notes", str(notes))] == ["garden"]
    assert indexed()


def test_a_title_read_where_no_index_can_be_built_is_unknown_and_ids_still_read(cli, notes: Path,
                                                                                 tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    unwritable = str(tmp_path / "a-file" / "state")  # no folder can be made under a file
    assert [d["id"] for d in run_json(cli, "read", "garden", "--notes", str(notes), "--state-dir", unwritable)] == \
        ["garden"]
    result = cli("read", "Garden", "garden", "--notes", str(notes), "--state-dir", unwritable)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "titles and aliases are looked up in the index, and none can be built here" in result.stderr
    assert "orgkit: error: unknown ID: Garden" in result.stderr and result.stdout.startswith("# Garden  [garden]")
    searched = cli("search", "compost", "--notes", str(notes), "--state-dir", unwritable)
    assert searched.exit_code == 1 and searched.stderr == (
        f"orgkit: error: cannot write the state dir {unwritable} (Not a directory), where orgkit keeps its index: "
        "name a writable one with --state-dir or ORGKIT_STATE_DIR\n")


def test_recent_lists_the_notes_changed_lately_newest_first(cli, notes: Path) -> None:
    now = time.time()
    for age, rel in enumerate(["home/garden.org", "twins/a.org", "work/plan.org", "twins/b.org"]):
        os.utime(notes / rel, (now - age * 60, now - age * 60))
    rows = run_json(cli, "recent", "--notes", str(notes))
    assert [r["file"] for r in rows] == ["home/garden.org", "twins/a.org", "work/plan.org", "twins/b.org",
                                         "home/old.org"]
    assert (rows[0]["id"], rows[0]["title"]) == ("garden", "Garden")
    assert (rows[1]["id"], rows[1]["locator"]) == (None, "twins/a.org")
    assert [r["file"] for r in run_json(cli, "recent", "--limit", "2", "--notes", str(notes))] == \
        ["home/garden.org", "twins/a.org"]
    assert len(run_json(cli, "recent", "--since", "7d", "--notes", str(notes))) == 4
    assert [r["file"] for r in run_json(cli, "recent", "--folder", "twins", "--notes", str(notes))] == \
        ["twins/a.org", "twins/b.org"]
    assert [r["file"] for r in run_json(cli, "recent", "--until", "7d", "--notes", str(notes))] == ["home/old.org"]

"""`orgkit read`: node text by ID, following id links within a token budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import write_notes


def ids(*names: str) -> dict[str, str]:
    return {n: f"{i:08d}-0000-4000-8000-{n:0>12}" for i, n in enumerate(names, 1)}


ID = ids("root", "head", "near", "far", "big", "dup")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", {
        "root.org": f"""
            :PROPERTIES:
            :ID: {ID['root']}
            :END:
            #+title: Root
            Root links to [[id:{ID['near']}][Near]] and [[id:{ID['big']}][Big]].
            * Section
            :PROPERTIES:
            :ID: {ID['head']}
            :END:
            Section text, linking [[id:{ID['root']}][back]].
            ** Child
            Child text.
            * Next section
            Not part of the Section subtree.
            """,
        "near.org": f"""
            :PROPERTIES:
            :ID: {ID['near']}
            :END:
            #+title: Near
            Near links to [[id:{ID['far']}][Far]] and [[id:missing-id][nothing]].
            """,
        "far.org": f"""
            :PROPERTIES:
            :ID: {ID['far']}
            :END:
            #+title: Far
            The end of the chain.
            """,
        "big.org": f"""
            :PROPERTIES:
            :ID: {ID['big']}
            :END:
            #+title: Big
            {"lorem ipsum " * 400}
            """,
    })


def read_json(cli, notes: Path, *args: str):
    result = cli("read", *args, "--notes", str(notes), "--json")
    return result, json.loads(result.stdout)


def test_heading_node_is_its_subtree(cli, notes: Path) -> None:
    result, docs = read_json(cli, notes, ID["head"])
    assert result.exit_code == 0
    (doc,) = docs
    assert doc["content"].startswith("* Section\n")
    assert "** Child\nChild text.\n" in doc["content"]
    assert "Next section" not in doc["content"]
    assert (doc["title"], doc["file"], doc["line"], doc["level"], doc["depth"], doc["via"]) == (
        "Section", "root.org", 6, 1, 0, None)
    assert doc["links"] == [ID["root"]]


def test_file_node_is_the_whole_file(cli, notes: Path) -> None:
    _, (doc,) = read_json(cli, notes, ID["far"])
    assert doc["content"] == (notes / "far.org").read_text()


def test_depth_follows_links_breadth_first_once(cli, notes: Path) -> None:
    _, docs = read_json(cli, notes, ID["root"], "--depth", "2")
    assert [(d["title"], d["depth"], d["via"]) for d in docs] == [
        ("Root", 0, None), ("Near", 1, ID["root"]), ("Big", 1, ID["root"]),
        ("Far", 2, ID["near"]),
    ]
    _, shallow = read_json(cli, notes, ID["root"], "--depth", "1")
    assert [d["title"] for d in shallow] == ["Root", "Near", "Big"]


def test_budget_leaves_out_what_does_not_fit_and_says_so(cli, notes: Path) -> None:
    result, docs = read_json(cli, notes, ID["root"], "--depth", "2", "--budget", "400")
    assert [d["title"] for d in docs] == ["Root", "Near", "Far"]
    assert "left out" in result.stderr and ID["big"] in result.stderr
    assert sum(len(d["content"]) for d in docs) / 4 <= 400


def test_unknown_id_reports_and_reads_the_rest(cli, notes: Path) -> None:
    result, docs = read_json(cli, notes, "no-such-id", ID["far"])
    assert result.exit_code == 1
    assert [d["title"] for d in docs] == ["Far"]
    assert "orgkit: error: unknown ID: no-such-id" in result.stderr


def test_duplicate_id_warns_naming_both_files(cli, notes: Path) -> None:
    write_notes(notes, {"copy.org": f":PROPERTIES:\n:ID: {ID['far']}\n:END:\n#+title: Copy\n"})
    os.utime(notes / "copy.org", ns=(1, (notes / "far.org").stat().st_mtime_ns + 10**9))  # the newer file
    result, docs = read_json(cli, notes, ID["far"])
    assert f"duplicate ID {ID['far']}: far.org:1 is read, also held by copy.org:1" in result.stderr
    assert [(d["file"], d["duplicates"]) for d in docs] == [("far.org", [{"file": "copy.org", "line": 1}])]


def test_id_lines_inside_blocks_are_not_notes(cli, notes: Path) -> None:
    write_notes(notes, {"example.org": f"#+begin_example\n:PROPERTIES:\n:ID: {ID['far']}\n:END:\n#+end_example\n"})
    result, docs = read_json(cli, notes, ID["far"])
    assert "duplicate" not in result.stderr
    assert [d["file"] for d in docs] == ["far.org"]


def test_human_output(cli, notes: Path) -> None:
    out = cli("read", ID["far"], "--notes", str(notes)).stdout
    assert out.startswith(f"# Far  [{ID['far']}]  (far.org:1, ~")
    assert "The end of the chain." in out


def test_same_notes_without_ripgrep(cli, notes: Path, monkeypatch) -> None:
    _, with_rg = read_json(cli, notes, ID["root"], "--depth", "2")
    monkeypatch.setenv("ORGKIT_RG", str(notes / "no-such-rg"))
    _, without = read_json(cli, notes, ID["root"], "--depth", "2")
    assert without == with_rg


def test_an_id_link_target_is_read_as_its_id(cli, notes: Path) -> None:
    result, docs = read_json(cli, notes, f"id:{ID['far']}")
    assert result.exit_code == 0 and [d["id"] for d in docs] == [ID["far"]]

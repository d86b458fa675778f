"""`orgkit nodes`, `links`, `backlinks` through the CLI, on small real notes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import write_notes

ALPHA = "11111111-1111-4111-8111-111111111111"
BETA = "22222222-2222-4222-8222-222222222222"
GAMMA = "33333333-3333-4333-8333-333333333333"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", {
        "alpha.org": f"""
            :PROPERTIES:
            :ID:       {ALPHA}
            :ROAM_ALIASES: "First note" A
            :END:
            #+title: Alpha
            #+filetags: :top:

            Alpha links to [[id:{BETA}][Beta]] and https://example.com/x.
            * TODO [#B] Part one :inner:
            :PROPERTIES:
            :ID:       {GAMMA}
            :END:
            Part one cites [[id:{BETA}][Beta again]].
            """,
        "sub/beta.org": f"""
            :PROPERTIES:
            :ID:       {BETA}
            :END:
            #+title: Beta

            Back to [[id:{ALPHA}][Alpha]].
            """,
    })


def test_nodes_json_has_every_field(cli, notes: Path) -> None:
    result = cli("nodes", "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stderr
    rows = {r["id"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {ALPHA, BETA, GAMMA}
    assert rows[GAMMA] == {
        "id": GAMMA, "file": "alpha.org", "level": 1, "pos": rows[GAMMA]["pos"], "line": 9,
        "title": "Part one", "todo": "TODO", "priority": "B", "olp": [],
        "tags": ["top", "inner"], "aliases": [], "refs": [], "properties": {"ID": GAMMA},
    }
    text = (notes / "alpha.org").read_text()
    assert text[rows[GAMMA]["pos"] - 1:].startswith("* TODO [#B] Part one")
    assert rows[ALPHA]["aliases"] == ["First note", "A"]
    assert rows[BETA]["file"] == "sub/beta.org" and rows[BETA]["level"] == 0


def test_links_and_sources(cli, notes: Path) -> None:
    rows = json.loads(cli("links", "--notes", str(notes), "--json").stdout)
    triples = sorted((r["source"], r["dest"], r["type"]) for r in rows)
    assert triples == sorted([
        (ALPHA, BETA, "id"), (ALPHA, "https://example.com/x", "https"),
        (GAMMA, BETA, "id"), (BETA, ALPHA, "id"),
    ])
    out_of_gamma = json.loads(cli("links", GAMMA, "--notes", str(notes), "--json").stdout)
    assert [(r["source"], r["dest"]) for r in out_of_gamma] == [(GAMMA, BETA)]


def test_backlinks_name_their_source(cli, notes: Path) -> None:
    result = cli("backlinks", BETA, "--notes", str(notes), "--json")
    rows = sorted(json.loads(result.stdout), key=lambda r: r["line"])
    assert [(r["source"], r["title"], r["file"], r["line"]) for r in rows] == [
        (ALPHA, "Alpha", "alpha.org", 8), (GAMMA, "Part one", "alpha.org", 13),
    ]
    human = cli("backlinks", BETA, "--notes", str(notes)).stdout
    assert "alpha.org:8: Alpha" in human and "alpha.org:13: Part one" in human


def test_unknown_id_is_one_line_and_exit_1(cli, notes: Path) -> None:
    result = cli("backlinks", "no-such-id", "--notes", str(notes))
    assert result.exit_code == 1
    assert result.stderr.strip() == "orgkit: error: unknown ID: no-such-id"


def test_missing_notes_directory(cli, tmp_path: Path) -> None:
    result = cli("nodes", "--notes", str(tmp_path / "nowhere"))
    assert result.exit_code == 1
    assert "notes directory not found" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_notes_from_environment(cli, notes: Path) -> None:
    result = cli("nodes", "--json", env={"ORGKIT_NOTES": str(notes)})
    assert len(json.loads(result.stdout)) == 3


def test_bad_files_are_skipped_with_a_warning(cli, notes: Path) -> None:
    (notes / "latin1.org").write_bytes(":PROPERTIES:\n:ID: x\n:END:\n#+title: caf\xe9\n".encode("latin-1"))
    (notes / "junk.org").write_bytes(b"\x00\x01\x02binary")
    (notes / "huge.org").write_text("* " + "x" * 2_000_000 + "\n", encoding="utf-8")
    result = cli("nodes", "--notes", str(notes), "--json")
    assert result.exit_code == 0
    assert {r["id"] for r in json.loads(result.stdout)} == {ALPHA, BETA, GAMMA}
    assert "latin1.org: not UTF-8" in result.stderr
    assert "junk.org: binary file" in result.stderr


def test_unreadable_file_is_skipped(cli, notes: Path) -> None:
    import os
    locked = notes / "locked.org"
    locked.write_text(":PROPERTIES:\n:ID: locked\n:END:\n")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as a user who can read any file")
        result = cli("nodes", "--notes", str(notes), "--json")
    finally:
        locked.chmod(0o644)
    assert result.exit_code == 0
    assert "locked.org: cannot read" in result.stderr


def test_duplicate_ids_warn_naming_both_files(cli, notes: Path) -> None:
    write_notes(notes, {"copy.org": f":PROPERTIES:\n:ID: {BETA}\n:END:\n#+title: Copy\n"})
    os.utime(notes / "copy.org", ns=(1, (notes / "sub/beta.org").stat().st_mtime_ns + 10**9))  # the newer file
    result = cli("nodes", "--notes", str(notes), "--json")
    assert result.exit_code == 0
    assert f"duplicate ID {BETA}: sub/beta.org:1 and copy.org:1" in result.stderr


def test_unterminated_drawer_and_block_do_not_break_the_file(cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path, {"odd.org": f"""
        :PROPERTIES:
        :ID: {ALPHA}
        :END:
        #+title: Odd
        :LOGBOOK:
        never closed [[id:{BETA}][b]]
        #+begin_src python
        [[id:{GAMMA}][also counted: the block is never closed]]
        * Heading
        :PROPERTIES:
        :ID: {BETA}
        """})
    rows = json.loads(cli("links", "--notes", str(notes), "--json").stdout)
    assert sorted(r["dest"] for r in rows) == sorted([BETA, GAMMA])
    nodes = json.loads(cli("nodes", "--notes", str(notes), "--json").stdout)
    assert [n["id"] for n in nodes] == [ALPHA]

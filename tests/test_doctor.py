"""`orgkit doctor`: findings name file and line; exit 1 when something is broken."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_notes


def test_healthy_notes_exit_0(cli, tmp_path: Path, tiny_model: Path) -> None:
    notes = write_notes(tmp_path, {
        "a.org": ":PROPERTIES:\n:ID: a\n:END:\n#+title: A\n[[id:b][B]]\n",
        "b.org": ":PROPERTIES:\n:ID: b\n:END:\n#+title: B\n[[id:a][A]]\n",
    })
    assert cli("index", "--notes", str(notes)).exit_code == 0
    result = cli("doctor", "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stdout
    report = json.loads(result.stdout)
    assert report["ok"] and report["facts"]["notes"] == {"files": 2, "nodes": 2, "links": 2}
    assert report["facts"]["rg"]["version"].startswith("ripgrep")
    assert report["facts"]["model"]["path"] == str(tiny_model)
    assert report["facts"]["index"]["files"] == 2
    assert report["facts"]["index"]["embedded"] == report["facts"]["index"]["passages"] > 0
    assert [f for f in report["findings"] if f["level"] != "info"] == []


def test_stale_index_and_missing_model_are_warnings(cli, tmp_path: Path, tiny_model: Path,
                                                    monkeypatch) -> None:
    notes = write_notes(tmp_path, {"a.org": ":PROPERTIES:\n:ID: a\n:END:\n#+title: A\n"})
    assert cli("doctor", "--notes", str(notes), "--json").exit_code == 0  # no index: a warning
    cli("index", "--notes", str(notes), "--no-embed")
    write_notes(notes, {"b.org": ":PROPERTIES:\n:ID: b\n:END:\n#+title: B\n"})
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(tmp_path / "no-model-here"))
    result = cli("doctor", "--notes", str(notes), "--json")
    assert result.exit_code == 0
    findings = {(f["check"], f["file"]) for f in json.loads(result.stdout)["findings"]
                if f["level"] == "warning"}
    assert ("index", "b.org") in findings and ("model", None) in findings


def test_problems_are_found_with_file_and_line(cli, tmp_path: Path, tiny_model: Path) -> None:
    notes = write_notes(tmp_path, {
        "a.org": ":PROPERTIES:\n:ID: a\n:ROAM_ALIASES: \"unterminated\n:END:\n#+title: A\n\nsee [[id:gone][x]]\n",
        "b.org": ":PROPERTIES:\n:ID: a\n:END:\n#+title: Copy of A\n",
        "c.org": ":PROPERTIES:\n:ID: c\n:END:\n#+title: Lonely\n",
    })
    (notes / "bad.org").write_bytes(b"\xff\xfe not utf-8")
    result = cli("doctor", "--notes", str(notes), "--json")
    assert result.exit_code == 1
    found = {(f["check"], f["file"], f["line"]) for f in json.loads(result.stdout)["findings"]}
    assert {("broken-link", "a.org", 7), ("duplicate-id", "b.org", 1), ("parse", "bad.org", None),
            ("parse", "a.org", 1), ("orphan", "c.org", 1)} <= found
    human = cli("doctor", "--notes", str(notes)).stdout
    assert "error: a.org:7: id link to missing note gone [broken-link]" in human


def test_unclosed_drawers_blocks_and_duplicate_ids_are_reported(cli, tmp_path: Path, tiny_model: Path) -> None:
    notes = write_notes(tmp_path, {
        "a.org": ("* A\n:PROPERTIES:\n:ID: lost\n* B\n:PROPERTIES:\n:ID: b\n:END:\n"
                  "#+begin_src python\nx = 1\n* C\n:PROPERTIES:\n:ID: b\n:END:\n:LOGBOOK:\n"),
    })
    index = cli("index", "--notes", str(notes), "--no-embed")
    assert index.exit_code == 0
    assert "a.org:2: property drawer has no :END:" in index.stderr
    assert "a.org:8: #+begin_src has no #+end_src" in index.stderr
    assert "a.org:14: drawer :LOGBOOK: has no :END:" in index.stderr
    assert "a.org:10: duplicate ID b (also at a.org:4)" in index.stderr
    nodes = json.loads(cli("nodes", "--notes", str(notes), "--json").stdout)
    assert [n["title"] for n in nodes] == ["B", "C"]  # the nodes below the broken drawer are kept
    report = json.loads(cli("doctor", "--notes", str(notes), "--json").stdout)
    found = {(f["check"], f["line"]) for f in report["findings"]}
    assert {("parse", 2), ("parse", 8), ("parse", 14), ("duplicate-id", 10)} <= found

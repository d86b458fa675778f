"""Character positions count as Emacs counts point: CRLF is one, a BOM is none."""

from __future__ import annotations

import json
from pathlib import Path

NOTE = ":PROPERTIES:\n:ID: f\n:END:\n#+title: Pos\nCafé [[id:x][é]]\n* H\n:PROPERTIES:\n:ID: h\n:END:\n"


def positions(cli, notes: Path) -> tuple[dict, list]:
    nodes = {n["id"]: n for n in json.loads(cli("nodes", "--notes", str(notes), "--json").stdout)}
    links = json.loads(cli("links", "--notes", str(notes), "--json").stdout)
    return nodes, links


def test_unicode_positions_are_characters(cli, tmp_path: Path) -> None:
    (tmp_path / "n.org").write_text(NOTE, encoding="utf-8")
    nodes, links = positions(cli, tmp_path)
    assert NOTE[nodes["h"]["pos"] - 1:].startswith("* H")
    assert NOTE[links[0]["pos"] - 1:].startswith("[[id:x]")
    assert (nodes["h"]["line"], nodes["f"]["title"]) == (6, "Pos")


def test_crlf_and_bom_give_the_same_positions(cli, tmp_path: Path) -> None:
    plain, dos = tmp_path / "plain", tmp_path / "dos"
    plain.mkdir(), dos.mkdir()
    (plain / "n.org").write_bytes(NOTE.encode())
    (dos / "n.org").write_bytes(b"\xef\xbb\xbf" + NOTE.replace("\n", "\r\n").encode())
    assert positions(cli, plain) == positions(cli, dos)

"""One ID, one note; outside text never becomes structure; leftovers of killed writes.

Each test is the attack: text carrying an existing note's `:ID:` (or a heading,
a drawer, a keyword) sent through every door that writes a note, then `read ID`
must still return the original note.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from memory_notes import NOWEB, TANGLE, make_notes, rows
from orgkit.errors import OrgkitError
from orgkit.org.escape import escape_lines, link_description, one_line
from orgkit.org.unique import DuplicateId, NoteIds
from orgkit.org.write import atomic_write, update_note
from orgkit.locator import note_ids, run_note_ids

ORGKIT = str(Path(sys.executable).with_name("orgkit"))
# A body that would add a heading holding the tangle note's ID, and a file keyword.
HIJACK = (f"Some finding.\n* Tangling code blocks\n:PROPERTIES:\n:ID:       {TANGLE}\n:END:\n"
          "#+title: Taken over\nThe attacker's text.\n")


@pytest.fixture
def notes(tmp_path: Path, monkeypatch) -> Path:
    for key in list(os.environ):
        if key.startswith("ORGKIT_LLM"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("USER", "reviewer")
    return make_notes(tmp_path / "notes")


def read_json(cli, notes: Path, node_id: str) -> list[dict]:
    result = cli("read", node_id, "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def assert_still_original(cli, notes: Path) -> None:
    (doc,) = read_json(cli, notes, TANGLE)
    assert doc["file"] == "tangle.org" and doc["title"] == "Tangling code blocks"
    assert "attacker" not in doc["content"]


def node_ids(path: Path) -> list[str]:
    from orgkit.org import parse_org

    return [n.id for n in parse_org(path.read_text(), path.name).nodes]


# --- the writer itself ---------------------------------------------------------

def test_the_writer_refuses_an_id_another_note_holds(notes: Path) -> None:
    ids = note_ids(notes)
    stolen = f":PROPERTIES:\n:ID: {TANGLE}\n:END:\n#+title: Mine\n".encode()
    with pytest.raises(DuplicateId, match=rf"new\.org: ID {TANGLE} is already held by "
                                          r"'Tangling code blocks' \(tangle\.org:1\); not written"):
        atomic_write(notes / "new.org", stolen, expected=None, ids=ids)
    assert not (notes / "new.org").exists()
    # The same node rewritten in place keeps its ID.
    before = (notes / "tangle.org").read_bytes()
    atomic_write(notes / "tangle.org", before + b"\nMore.\n", expected=before, ids=ids)
    # A second node with that ID in the same file is refused too.
    with pytest.raises(DuplicateId, match="two nodes of this file"):
        update_note(notes / "noweb.org", lambda old: old + f"* Copy\n:PROPERTIES:\n:ID: {NOWEB}\n:END:\n".encode(),
                    ids=ids)
    # An `:ID:` line inside a block is not a node: it takes nothing.
    block = f"#+title: Example\n#+begin_example\n:PROPERTIES:\n:ID: {TANGLE}\n:END:\n#+end_example\n".encode()
    atomic_write(notes / "example.org", block, expected=None, ids=ids)
    # Nodes are compared, not lines: `:ID+:`, or a dormant ID woken by a change of structure.
    with pytest.raises(DuplicateId, match="tangle.org"):
        atomic_write(notes / "plus.org", f":PROPERTIES:\n:id+: {TANGLE}\n:END:\n".encode(), expected=None, ids=ids)
    dormant = f"* Kept out\n:PROPERTIES:\n:ID: {TANGLE}\n:ROAM_EXCLUDE: t\n:END:\n".encode()
    atomic_write(notes / "dormant.org", dormant, expected=None, ids=ids)
    with pytest.raises(DuplicateId, match="tangle.org"):
        atomic_write(notes / "dormant.org", dormant.replace(b":ROAM_EXCLUDE: t\n", b""), expected=dormant, ids=ids)


def test_a_write_that_adds_no_id_looks_nothing_up(notes: Path) -> None:
    asked: list[list[str]] = []
    ids = NoteIds(notes, lambda wanted: asked.append(wanted) or {})
    before = (notes / "tangle.org").read_bytes()
    atomic_write(notes / "tangle.org", before + b"\n* A heading\n", expected=before, ids=ids)
    atomic_write(notes / "plain.org", b"#+title: Plain\n", expected=None, ids=ids)
    assert asked == []
    atomic_write(notes / "fresh.org", b":PROPERTIES:\n:ID: fresh-1\n:END:\n", expected=None, ids=ids)
    assert asked == [["fresh-1"]]


def test_extraction_notes_cannot_take_an_id(notes: Path) -> None:
    from orgkit.extract import notes as nt

    text = f":PROPERTIES:\n:ID: {TANGLE}\n:END:\n#+title: Claim\n"
    with pytest.raises(DuplicateId, match="tangle.org"):
        nt.write_note(note_ids(notes), notes / "extractions" / "r" / "claims" / "c.org", text, TANGLE)
    with pytest.raises(DuplicateId, match="tangle.org"):  # the run's snapshot of the notes' IDs
        nt.write_note(run_note_ids(notes), notes / "extractions" / "r" / "claims" / "c.org", text, TANGLE)
    # the snapshot also holds what the run itself wrote since it was taken
    run = run_note_ids(notes)
    fresh = "aaaaaaaa-1111-4111-8111-111111111111"
    own = f":PROPERTIES:\n:ID: {fresh}\n:END:\n#+title: Claim\n"
    nt.write_note(run, notes / "extractions" / "r" / "claims" / "a.org", own, fresh)
    with pytest.raises(DuplicateId, match="claims/a.org"):
        nt.write_note(run, notes / "extractions" / "r" / "claims" / "b.org", own, fresh)


# --- every door that writes a note -----------------------------------------------

def test_a_deposit_cannot_take_an_id_and_its_body_stays_text(cli, notes: Path) -> None:
    result = cli("deposit", "--notes", str(notes), "--title", "Found\u2028#+title: x\rmore", "--body", HIJACK,
                 "--meta", "source=a\u2029:ID: b", "--no-process", "--json")
    assert result.exit_code == 0, result.stderr
    made = json.loads(result.stdout)
    path = notes / made["path"]
    text = path.read_text()
    assert node_ids(path) == [made["id"]]
    assert "\n,* Tangling code blocks\n,:PROPERTIES:\n,:ID:" in text and "\n,#+title: Taken over\n" in text
    assert "#+title: Found #+title: x more\n" in text and ":SOURCE: a :ID: b\n" in text
    assert made["title"] == "Found #+title: x more" and made["meta"] == {"source": "a :ID: b"}
    assert_still_original(cli, notes)
    # Review shows the stored (escaped) text.
    admit = rows(notes, "SELECT id FROM proposals WHERE deposit = ?", (made["id"],))[0]["id"]
    shown = cli("review", "show", admit, "--notes", str(notes))
    assert shown.exit_code == 0 and "+,* Tangling code blocks" in shown.stdout


def test_a_new_note_cannot_take_an_id(cli, notes: Path) -> None:
    result = cli("new", "Title\ron\u2028three lines", "--body", "-", "--notes", str(notes), "--json", input=HIJACK)
    assert result.exit_code == 0, result.stderr
    made = json.loads(result.stdout)
    assert made["title"] == "Title on three lines"
    assert node_ids(notes / made["file"]) == [made["id"]]
    assert "\n,:ID:       " in (notes / made["file"]).read_text()
    assert_still_original(cli, notes)


def test_an_accepted_append_cannot_add_a_node(cli, notes: Path, llm_server, tiny_model, monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_LLM_ENDPOINT", llm_server.url)
    monkeypatch.setenv("ORGKIT_LLM_MODEL", "loopback")
    llm_server.reply({"proposals": [
        {"kind": "append", "target": NOWEB, "text": HIJACK, "chunks": [1]},
        {"kind": "link", "dest": TANGLE, "description": "x]] [[id:evil][y\n* Heading", "chunks": [1]},
        {"kind": "new", "title": "A\nB" + " long" * 60, "body": HIJACK, "chunks": [1]},
        {"kind": "append", "target": TANGLE, "text": "Tangling is byte for byte.", "chunks": [1]},
    ]})
    made = cli("deposit", "--notes", str(notes), "--title", "Noweb", "--body", "Noweb references help.", "--json")
    assert made.exit_code == 0, made.stderr
    pending = [(p["id"], p["target"]) for p in rows(notes, "SELECT id, target FROM proposals WHERE status = 'pending'")]
    # A reviewer's edit is outside text too: it cannot take the noweb note's ID either.
    edited = next(pid for pid, target in pending if target == TANGLE)
    result = cli("review", "edit", edited, "--text", f"* x\n:PROPERTIES:\n:ID: {NOWEB}\n:END:\n",
                 "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stderr
    accepted = cli("review", "accept", *[pid for pid, _ in pending if pid != edited], "--notes", str(notes), "--json")
    assert accepted.exit_code == 0, accepted.stderr
    assert node_ids(notes / "tangle.org") == [TANGLE] and f"\n,:ID: {NOWEB}\n" in (notes / "tangle.org").read_text()
    (doc,) = read_json(cli, notes, NOWEB)
    assert doc["file"] == "noweb.org" and doc["duplicates"] == []
    assert node_ids(notes / "noweb.org") == [NOWEB]
    noweb = (notes / "noweb.org").read_text()
    assert "\n,:ID:       " in noweb and "- [[id:" not in noweb
    deposit = (notes / json.loads(made.stdout)["path"]).read_text()
    assert f"[[id:{TANGLE}][x)) ((id:evil)(y * Heading]]" in deposit
    created = next(p for p in (notes / "deposits").glob("*.org") if ":DEPOSITED_VIA: librarian" in p.read_text())
    assert f"#+title: A B{' long' * 60}\n" in created.read_text() and len(node_ids(created)) == 1
    assert_still_original(cli, notes)


def test_serve_and_mcp_new_and_deposit_cannot_take_an_id(cli, notes: Path, tiny_model) -> None:
    from mcp import Client, StdioServerParameters

    (notes / "afile").write_text("x")
    requests = [{"op": "new", "title": "Served", "body": HIJACK},
                {"op": "deposit", "title": "Served deposit", "body": HIJACK, "no_process": True},
                {"op": "deposit", "title": "T", "body": "B", "path": "afile/x.org", "no_process": True},
                {"op": "new", "title": "bad\udcff"}]
    served = cli("serve", "--notes", str(notes), input="".join(json.dumps(r) + "\n" for r in requests))
    answers = [json.loads(line) for line in served.stdout.splitlines()]
    assert answers[2:] == [{"error": "path 'afile/x.org': afile is not a folder"},
                           {"error": "'title' holds a lone surrogate (U+DCFF) at character 3: not Unicode text"}]
    for made in answers[:2]:
        path = notes / (made["result"].get("file") or made["result"]["path"])
        assert node_ids(path) == [made["result"]["id"]]

    async def scenario():
        params = StdioServerParameters(command=ORGKIT, args=["mcp", "--notes", str(notes)], env=dict(os.environ))
        async with Client(params) as client:
            made = await client.call_tool("new", {"title": "Over MCP", "body": HIJACK})
            assert not made.is_error, made.content[0].text
            node = await client.read_resource(f"orgkit://node/{TANGLE}")
            return json.loads(made.content[0].text)["result"], node.contents[0].text

    made, node = anyio.run(scenario)
    assert node_ids(notes / made["file"]) == [made["id"]]
    assert "attacker" not in node and "Tangling code blocks" in node
    assert_still_original(cli, notes)


# --- escape, directly ------------------------------------------------------------------

def test_escape_makes_outside_text_inert() -> None:
    assert one_line("a\r\nb\u2028c\u2029d\x85e\x0bf\tg\x00h") == "a b c d e f g h"
    assert one_line("x" * 10, 5) == "xxxx…"
    assert escape_lines("* h\n:ID: x\n#+title: t\n  :END:\n,* kept\ntext\u2028* hidden\rplain") == (
        ",* h\n,:ID: x\n,#+title: t\n,  :END:\n,,* kept\ntext\n,* hidden\nplain")
    assert escape_lines("nul\x00") == "nul\ufffd"
    assert link_description("a]] [[b\nc") == "a)) ((b c"


# --- leftovers of killed writes ------------------------------------------------------------

KILLED_WRITER = """
import os, signal, sys
import orgkit.org.write as write
real = write.os.replace
def die(*args):
    os.kill(os.getpid(), signal.SIGKILL)
write.os.replace = die  # the rename that would have finished the write
from orgkit.cli import main
main(sys.argv[1:])
"""


def test_a_killed_writers_temporary_file_is_reported_then_removed(cli, notes: Path) -> None:
    import subprocess

    (notes / "plain.org").write_text("#+title: Plain\n* A heading\n")
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, "id", "add", str(notes / "plain.org"), "--all"],
                            capture_output=True, timeout=60, cwd=notes.parent)
    assert killed.returncode == -9, killed.stderr
    (left,) = notes.glob(".orgkit-*.tmp")
    assert b":ID:" in left.read_bytes() and b":ID:" not in (notes / "plain.org").read_bytes()
    doctor = cli("doctor", "--notes", str(notes), "--json")
    found = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "temporary-file"]
    assert [f["file"] for f in found] == [left.name]
    other = notes / ".orgkit-x.org.abcdefgh.tmp"  # not a note writer's file: left alone
    other.write_text("x")
    result = cli("new", "Next write", "--notes", str(notes))
    assert result.exit_code == 0, result.stderr
    assert not left.exists() and other.exists()
    assert not [f for f in json.loads(cli("doctor", "--notes", str(notes), "--json").stdout)["findings"]
                if f["check"] == "temporary-file"]


# --- duplicate IDs a person made on disk --------------------------------------------------

def test_a_duplicate_id_on_disk_resolves_to_the_older_note(cli, notes: Path, tiny_model) -> None:
    original = notes / "tangle.org"
    copy = notes / "copy.org"
    copy.write_text(f":PROPERTIES:\n:ID: {TANGLE}\n:END:\n#+title: Tangling code blocks copied\n\n"
                    "The attacker's text about tangling code blocks.\n")
    start = original.stat().st_mtime_ns
    os.utime(copy, ns=(start, start + 10**9))
    assert cli("index", "--notes", str(notes), "--quiet").exit_code == 0
    # Edited after the copy was made, the original is now the newer file: it keeps its ID.
    original.write_text(original.read_text() + "\nEdited later.\n")
    os.utime(original, ns=(start, start + 2 * 10**9))
    assert cli("index", "--notes", str(notes), "--quiet").exit_code == 0
    result = cli("read", TANGLE, "--notes", str(notes), "--json")
    (doc,) = json.loads(result.stdout)
    assert doc["file"] == "tangle.org" and doc["duplicates"] == [{"file": "copy.org", "line": 1}]
    assert f"duplicate ID {TANGLE}: tangle.org:1 is read, also held by copy.org:1" in result.stderr
    recalled = json.loads(cli("recall", "tangling code blocks", "--notes", str(notes), "--json").stdout)
    entry = next(e for e in recalled["included"] if e["id"] == TANGLE)
    assert entry["file"] == "tangle.org" and entry["duplicates"] == [{"file": "copy.org", "line": 1}]
    assert any("duplicate ID" in w for w in recalled["warnings"])
    doctor = cli("doctor", "--notes", str(notes), "--json")
    assert doctor.exit_code == 1
    found = [(f["level"], f["file"], f["message"]) for f in json.loads(doctor.stdout)["findings"]
             if f["check"] == "duplicate-id"]
    assert found == [("error", "copy.org", f"ID {TANGLE} also at tangle.org:1 (the node read by this ID)")]
    # A rebuild ranks by file mtime, then path: the copy is the newer file again.
    os.utime(copy, ns=(start, start + 3 * 10**9))
    assert cli("index", "--rebuild", "--notes", str(notes), "--quiet").exit_code == 0
    (doc,) = json.loads(cli("read", TANGLE, "--notes", str(notes), "--json").stdout)
    assert doc["file"] == "tangle.org"


# --- supersession as a compare-and-set ---------------------------------------------------

def test_six_concurrent_supersessions_have_one_winner(cli, notes: Path) -> None:
    import subprocess

    old = json.loads(cli("deposit", "--notes", str(notes), "--title", "Old", "--body", "old finding",
                         "--no-process", "--json").stdout)
    procs = [subprocess.Popen([ORGKIT, "deposit", "--notes", str(notes), "--title", f"Correction {i}",
                               "--body", f"correction {i}", "--supersedes", old["id"], "--no-process", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(6)]
    outs = [(p.communicate(timeout=120), p.returncode) for p in procs]
    won = [json.loads(out) for (out, _), code in outs if code == 0]
    assert len(won) == 1, outs
    winner = won[0]["id"]
    refused = [err for (_, err), code in outs if code != 0]
    assert len(refused) == 5 and all(code == 1 for _, code in outs if code != 0)
    assert all(err == f"orgkit: error: deposit {old['id']} is already superseded by {winner}\n" for err in refused)
    assert rows(notes, "SELECT superseded_by FROM deposits WHERE id = ?", (old["id"],)) == [{"superseded_by": winner}]
    assert len(rows(notes, "SELECT id FROM deposits")) == 2
    assert sorted(p.name for p in (notes / "deposits").iterdir()) == sorted(
        Path(d["path"]).name for d in (old, won[0]))


# --- one-line errors ------------------------------------------------------------------------

def test_bad_paths_long_titles_and_undecodable_titles_are_one_line_errors(cli, notes: Path) -> None:
    (notes / "dangling").symlink_to(notes / "nowhere")
    (notes / "afile").write_text("x")
    base = ("deposit", "--notes", str(notes), "--title", "T", "--body", "B", "--no-process")
    cases = [
        (("--path", "dangling/x.org"), "--path 'dangling/x.org': dangling is a link to nothing"),
        (("--path", "afile/x.org"), "--path 'afile/x.org': afile is not a folder"),
        (("--path", "a" * 300 + ".org"), "is too long for the file system"),
    ]
    for extra, message in cases:
        for json_flag in ((), ("--json",)):
            result = cli(*base, *extra, *json_flag)
            assert result.exit_code == 1 and result.stdout == ""
            assert result.stderr.startswith("orgkit: error: ") and message in result.stderr
            assert result.stderr.count("\n") == 1
    long_title = "Long " * 60
    made = json.loads(cli("deposit", "--notes", str(notes), "--title", long_title, "--body", "B", "--no-process",
                          "--json").stdout)
    assert made["title"] == long_title.strip() and len(Path(made["path"]).name.encode()) <= 255
    assert f"#+title: {long_title.strip()}\n" in (notes / made["path"]).read_text()
    new = json.loads(cli("new", long_title, "--notes", str(notes), "--json").stdout)
    assert new["title"] == long_title.strip() and len(new["file"].encode()) <= 255
    for args in (("new", "bad\udcff title"), ("deposit", "--title", "bad\udcff", "--body", "B", "--no-process")):
        result = cli(*args, "--notes", str(notes), "--json")
        assert result.exit_code == 2  # a parameter no surface takes: refused where parameters are checked
        assert result.stderr == \
            "orgkit: error: 'title' holds a lone surrogate (U+DCFF) at character 3: not Unicode text\n"

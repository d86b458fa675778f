"""`orgkit scan`: headlines and titles found with ripgrep, IDs from drawers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_notes
from orgkit.rg import find_rg

FILE_ID = "aaaaaaaa-0000-4000-8000-000000000001"
HEAD_ID = "aaaaaaaa-0000-4000-8000-000000000002"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", {
        "garden.org": f"""
            :PROPERTIES:
            :ID: {FILE_ID}
            :END:
            #+title: Garden Planning

            * Soil and compost
            :PROPERTIES:
            :ID: {HEAD_ID}
            :END:
            ** Compost heat [1/2]
            *** TODO Turn the COMPOST pile :weekly:
            * Planning the beds
            Compost mentioned in body text only.
            """,
        "no-id.org": """
            * Compost without any node
            """,
        "data/attachment.org": """
            * Compost in an attachment folder (org-roam ignores data/)
            """,
        "notes.txt": "* Compost in a text file\n",
    })


def scan_json(cli, notes: Path, *args: str) -> list[dict]:
    result = cli("scan", *args, "--notes", str(notes), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_every_term_case_insensitive_with_outline_and_ids(cli, notes: Path) -> None:
    hits = scan_json(cli, notes, "compost")
    assert [(h["file"], h["line"], h["title"], h["level"], h["id"], h["olp"]) for h in hits] == [
        ("garden.org", 6, "Soil and compost", 1, HEAD_ID, []),
        ("garden.org", 10, "Compost heat [1/2]", 2, HEAD_ID, ["Soil and compost"]),
        ("garden.org", 11, "Turn the COMPOST pile", 3, HEAD_ID, ["Soil and compost", "Compost heat"]),
        ("no-id.org", 1, "Compost without any node", 1, None, []),
    ]
    assert [h["line"] for h in scan_json(cli, notes, "PILE", "turn")] == [11]
    assert scan_json(cli, notes, "compost", "beds") == []


def test_file_titles_match_and_name_the_file_node(cli, notes: Path) -> None:
    hits = scan_json(cli, notes, "planning")
    assert [(h["title"], h["level"], h["id"]) for h in hits] == [
        ("Garden Planning", 0, FILE_ID), ("Planning the beds", 1, FILE_ID),
    ]


def test_titles_inside_blocks_are_not_titles(cli, notes: Path) -> None:
    write_notes(notes, {"doc.org": "#+title: Real compost title\n#+begin_example\n  #+title: compost in an example\n#+end_example\n"})
    titles = [h["title"] for h in scan_json(cli, notes, "compost") if h["file"] == "doc.org"]
    assert titles == ["Real compost title"]


def test_limit_and_regex(cli, notes: Path) -> None:
    assert len(scan_json(cli, notes, "compost", "--limit", "2")) == 2
    hits = scan_json(cli, notes, "--regex", r"^(soil|planning)\b")
    assert [h["title"] for h in hits] == ["Soil and compost", "Planning the beds"]


def test_human_output_is_a_sparse_tree(cli, notes: Path) -> None:
    out = cli("scan", "compost", "--notes", str(notes)).stdout
    assert "garden.org\n" in out
    assert f"  *** Soil and compost > Compost heat > Turn the COMPOST pile  [{HEAD_ID}]  :11" in out
    assert "  * Compost without any node  [no-id.org::*Compost without any node]  :1" in out
    write_notes(notes, {"untitled.org": "#+title: Compost notes without an ID\n"})
    out = cli("scan", "compost", "notes", "--notes", str(notes)).stdout
    assert "  #+title: Compost notes without an ID  [untitled.org]  :1" in out


def test_bad_regex_and_empty_query_are_user_errors(cli, notes: Path) -> None:
    result = cli("scan", "--regex", "(", "--notes", str(notes))
    assert result.exit_code == 1 and "invalid regex" in result.stderr
    assert cli("scan", "--notes", str(notes)).exit_code == 2


def test_same_hits_without_ripgrep(cli, notes: Path, monkeypatch) -> None:
    with_rg = scan_json(cli, notes, "compost")
    monkeypatch.setenv("ORGKIT_RG", str(notes / "no-such-rg"))  # seen at once: rg is looked up by its value
    result = cli("scan", "compost", "--notes", str(notes), "--json")
    assert json.loads(result.stdout) == with_rg
    assert "ripgrep (rg) not found" in result.stderr


def test_ripgrep_is_found(cli) -> None:
    assert find_rg() is not None, "the ripgrep wheel or an rg on PATH should be installed"


def test_scan_braindump(cli, braindump: Path) -> None:
    hits = scan_json(cli, braindump, "bayesian", "inference")
    titles = {h["title"] for h in hits}
    assert {"Bayesian Inference", "Arguments Against Bayesian Inference"} <= titles
    assert all(h["id"] for h in hits)


def test_rank_orders_hits_before_the_limit(notes: Path) -> None:
    from orgkit.retrieve.scan import scan

    hits = scan(notes, "compost|turn|pile", regex=True, limit=2,
                rank=lambda text: -sum(w in text.lower() for w in ("compost", "turn", "pile")))
    assert [h.title for h in hits.hits][0] == "Turn the COMPOST pile"
    assert len(hits.hits) == 2


def test_anchored_regex_matches_title_values(cli, notes: Path) -> None:
    hits = scan_json(cli, notes, "--regex", "^Garden")
    assert [(h["title"], h["level"], h["id"]) for h in hits] == [("Garden Planning", 0, FILE_ID)]


def test_a_scan_loads_no_model_library(notes: Path) -> None:
    """Start-up is most of a scan's cost: it must not import the embedding or model-seam stacks."""
    import subprocess
    import sys

    code = ("import sys; from orgkit.cli import main\n"
            f"sys.argv = ['orgkit', 'scan', 'compost', '--json', '--notes', {str(notes)!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "heavy = ['fastembed', 'onnxruntime', 'numpy', 'httpx', 'jsonschema', 'mcp', 'orgkit.index', 'sqlite3']\n"
            "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout)[0]["title"] == "Soil and compost"
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_an_outline_cut_after_a_line_places_it_as_the_whole_file_does() -> None:
    """A scan reads a file only as far as its last hit's section; every answer must be the same."""
    import random

    from orgkit.org.outline import Outline

    pieces = ["* Top", "** TODO Child [1/2]", "*** Deep :tag:", "*bold* text", "*", "**  ", "text",
              ":PROPERTIES:", ":ID: id-{n}", ":CUSTOM: x", ":END:", "#+title: T{n}", "#+TODO: NEXT | DONE",
              "#+begin_src org", "* fake heading in a block", "#+end_src", "#+begin_example", "#+end_example",
              "SCHEDULED: <2024-01-01>", "# a comment", "#", "", "  :PROPERTIES:"]
    rng = random.Random(7)
    for _ in range(600):
        text = "\n".join(rng.choice(pieces).format(n=n) for n in range(rng.randint(1, 30)))
        whole = Outline(text)
        for through in range(len(whole.lines)):
            cut = Outline(text, through=through)
            for line in rng.sample(range(through + 1), through + 1):  # any order: lookups share caches
                assert cut.place(line) == whole.place(line), (text, through, line)
                assert cut.in_opaque(line) == whole.in_opaque(line), (text, through, line)


def test_odd_file_names_and_ripgrep_complaints(cli, tmp_path: Path) -> None:
    """A name holding a newline is one file, not a broken record; a dangling link (where the user
    lets links lead: notes.follow_roots) is a warning."""
    notes = write_notes(tmp_path / "notes", {"a\nb.org": "* Compost one\n", "c.org": "* compost two\n"})
    (notes / "broken.org").symlink_to(tmp_path / "nowhere.org")
    result = cli("scan", "compost", "--notes", str(notes), "--json", env={"ORGKIT_FOLLOW_ROOTS": str(tmp_path)})
    assert result.exit_code == 0, result.stderr
    assert [(h["file"], h["title"]) for h in json.loads(result.stdout)] == [
        ("a\nb.org", "Compost one"), ("c.org", "compost two")]
    assert "broken.org" in result.stderr


def test_a_caller_that_stops_early_stops_ripgrep(tmp_path: Path) -> None:
    """Files stream from rg while it searches, at a lower priority than their reader;
    leaving after the first must not leave rg running."""
    import os

    from orgkit.rg import rg_org_files

    notes = write_notes(tmp_path / "notes", {f"n{i:03}.org": "* Compost\n" * 2000 for i in range(200)})

    def running_in(directory: Path) -> list[Path]:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and (proc / "cwd").resolve() == directory.resolve():
                    found.append(proc)
            except OSError:
                pass
        return found

    warnings: list[str] = []
    files = rg_org_files(notes, ["Compost"], warnings, caller_first=True)
    rel, lines = next(files)
    assert len(lines) == 2000 and lines[0] == (1, "* Compost")
    [rg] = running_in(notes)  # blocked on its full pipe, its search threads started
    niceness = {int((task / "stat").read_text().rsplit(")", 1)[1].split()[16]) for task in (rg / "task").iterdir()}
    assert niceness == {min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)}
    files.close()
    assert running_in(notes) == []
    assert warnings == []


def test_ripgrep_starts_while_another_thread_changes_the_environment(tmp_path: Path) -> None:
    """A server imports numpy (which calls putenv) in one thread while another starts rg:
    a child that inherits the moving environment fails to exec with EFAULT."""
    import os
    import threading

    from orgkit.rg import rg_org_files

    notes = write_notes(tmp_path / "notes", {"a.org": "* Compost\n"})
    stop = threading.Event()

    def churn() -> None:
        keys = [f"ORGKIT_TEST_CHURN_{k}" for k in range(64)]
        while not stop.is_set():
            for key in keys:
                os.putenv(key, "1")
            for key in keys:
                os.unsetenv(key)

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        for _ in range(40):
            warnings: list[str] = []
            assert [rel for rel, _ in rg_org_files(notes, ["Compost"], warnings)] == ["a.org"]
    finally:
        stop.set()
        thread.join()


def test_a_flood_of_ripgrep_complaints_does_not_stall_it(tmp_path: Path, monkeypatch) -> None:
    """rg's complaints are drained as it writes them: more than a pipe holds must not block it."""
    import threading

    monkeypatch.setenv("ORGKIT_FOLLOW_ROOTS", str(tmp_path))  # links followed: rg complains of each dangling one
    from orgkit.retrieve.scan import scan

    notes = write_notes(tmp_path / "notes", {"real.org": "* Compost\n"})
    for i in range(1500):  # ~100 bytes of complaint each: more than a 64 KiB pipe
        (notes / f"dangling-{i:04}.org").symlink_to(tmp_path / f"nowhere-{i}.org")
    done: list = []
    worker = threading.Thread(target=lambda: done.append(scan(notes, "compost")), daemon=True)
    worker.start()
    worker.join(60)
    assert done, "the scan stalled"
    assert [h.title for h in done[0].hits] == ["Compost"]
    assert sum("dangling-" in w for w in done[0].warnings) == 1500


def test_scan_reads_titles_todo_keywords_and_ids_as_the_parser_does(tmp_path: Path) -> None:
    """Notes that mix blocks, LaTeX environments, drawers and keyword lines in any order: a scan's
    first title line is the parser's file title, and each heading node it finds has the
    parser's title, ID and outline path, whatever TODO keywords the file declares (or only
    seems to, inside a source block)."""
    import random

    from orgkit.org import parse_org
    from orgkit.retrieve.scan import scan

    drawer = "\n:PROPERTIES:\n:ID: id-{n}\n:END:"
    pieces = ["* FOO One {n}" + drawer, "** TODO Two {n}" + drawer, "*** BAR Three [1/2] {n}" + drawer,
              "* FOO One {n}", "** TODO Two {n}", "*** BAR Three [1/2] {n}", "text {n}",
              ":PROPERTIES:\n:ID: id-{n}\n:END:", "#+title: Title {n}", "#+ToDo: FOO | BAR",
              "#+begin_src org", "#+end_src", "#+begin_quote", "#+end_quote", "#+begin_example",
              "#+end_example", "\\begin{{equation}}", "\\end{{equation}}", ":LOGBOOK:", ":END:", ""]
    rng = random.Random(11)
    notes = tmp_path / "notes"
    notes.mkdir()
    texts = {}
    for n in range(200):
        pieces_here = [rng.choice(pieces).format(n=f"{n}-{k}") for k in range(rng.randint(1, 25))]
        texts[f"f{n:03}.org"] = "\n".join(pieces_here) + "\n"
        (notes / f"f{n:03}.org").write_text(texts[f"f{n:03}.org"])
    found = scan(notes, "^", regex=True)  # every headline and title line
    assert not found.warnings
    hits: dict[str, list] = {}
    for hit in found.hits:
        hits.setdefault(hit.file, []).append(hit)
    checked = 0
    for rel, text in texts.items():
        parsed = parse_org(text, rel)
        titles = [h.title for h in hits.get(rel, []) if h.level == 0]
        assert parsed.title == (titles[0] if titles else rel[:-4]), (rel, text)
        at_line = {h.line: h for h in hits.get(rel, [])}
        for node in parsed.nodes:
            if node.level:
                hit = at_line[node.line]
                assert (hit.title, hit.id, hit.olp) == (node.title, node.id, node.olp), (rel, text)
                checked += 1
    assert checked > 100


def test_aliases_find_their_node_and_links_match_by_what_a_reader_sees(cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "aliased", {
        "reading.org": """
            :PROPERTIES:
            :ID: reading
            :ROAM_ALIASES: "Book list" Library "Reading list"
            :END:
            #+title: Reading

            * See [[https://example.org/notebooks][my sketches]]
            * Kept in [[id:reading][the books page]]
            :PROPERTIES:
            :ID: kept
            :ROAM_ALIASES: Shelf
            :END:
            """,
    })
    books = scan_json(cli, notes, "books")
    assert [(h["line"], h["id"]) for h in books] == [(8, "kept")]  # not through "notebooks" in a URL
    assert [(h["line"], h["title"], h["id"]) for h in scan_json(cli, notes, "book", "list")] == [
        (5, "Reading", "reading")]
    assert [(h["line"], h["id"]) for h in scan_json(cli, notes, "shelf")] == [(8, "kept")]
    assert [h["id"] for h in scan_json(cli, notes, "library")] == ["reading"]
    assert scan_json(cli, notes, "book", "library") == []  # every word in one alias, as node-find matches
    assert [h["line"] for h in scan_json(cli, notes, "reading")] == [5]  # by title and by alias: once
    assert [h["line"] for h in scan_json(cli, notes, "--limit", "5", "reading")] == [5]


def test_no_hit_says_so_on_stderr(cli, notes: Path) -> None:
    result = cli("scan", "xqzzyv", "--notes", str(notes))
    assert result.exit_code == 0 and "no headline, title or alias matches 'xqzzyv'" in result.stderr

"""Extraction notes a person can live with: verbatim quotes, no injected structure, re-runs that
supersede, deletions and audits that leave every note consistent, corrections applied offline."""

from __future__ import annotations

import json
from pathlib import Path

from orgkit.org import parse_org

from test_extract_run import SOURCE_A, notes_of, quote_nodes, run_json, workspace  # noqa: F401 (fixture)


def commit(cli, workspace: Path, source: str, *candidates: tuple[str, str, str]):
    """Plan a run over `source` and commit `candidates` (dimension, claim, quote) to it."""
    plan = json.loads(cli("extract", source, "--schema", "adr", "--plan", "--notes", "notes", "--json").stdout)
    path = workspace.parent / "cands.json"
    path.write_text(json.dumps({"run": plan["run"], "candidates": [
        {"source": source, "dimension": d, "claim": c, "quote": q} for d, c, q in candidates]}), encoding="utf-8")
    return run_json(cli, "--commit", "cands.json")


def test_claims_are_sentences_and_quotes_are_shown_verbatim(workspace: Path, cli) -> None:
    source = ("# Pick a queue\n\n## Decision\n\n**(A) Use Redis** for the queue, as it is already deployed.\n"
              "* Status: accepted\n#+begin_src and a line that looks like org\n")
    (workspace.parent / "q.md").write_text(source, encoding="utf-8")
    result, out = commit(cli, workspace, "q.md",
                         ("decision", "Use Redis.", "**(A) Use Redis** for the queue, as it is already deployed."),
                         ("decision", "Org-looking.", "* Status: accepted\n#+begin_src and a line"))
    assert result.exit_code == 0, result.stderr
    for path in notes_of(workspace, "claims"):
        text = path.read_text(encoding="utf-8")
        nodes = parse_org(text, str(path)).nodes
        assert [n.level for n in nodes] == [0, 1]  # the claim and its quote, nothing the quote made
        claim = next(c for c in out["claims"] if c["claim_id"] == nodes[0].id)
        from orgkit.org.escape import read_verbatim_block
        shown = read_verbatim_block("\n".join(text.split("\n")[nodes[1].line:]))
        assert shown == claim["quote"] == source[claim["start"]:claim["end"]]
        assert "\n," not in text
    (workspace.parent / "r.md").write_text(source + "\n", encoding="utf-8")  # q.md would keep its claims
    result, out = run_json(cli, "r.md", "--schema", "adr")  # offline: the sentence, not "Dimension: quote"
    decision = next(c for c in out["claims"] if c["dimension"] == "adr_decision")
    assert decision["claim"] == "(A) Use Redis for the queue, as it is already deployed."


def test_injected_structure_and_short_quotes_ground_nothing_and_a_repeated_commit_says_so(
        workspace: Path, cli) -> None:
    result, out = commit(cli, workspace, "a.md",
                         ("decision", "* Evil\n:PROPERTIES:\n:ID: evil-id\n:END:\n#+filetags: :pwned:",
                          "We will keep the cache in SQLite."),
                         ("decision\n* Heading :ID: x", "Sneaky.", "Starts take seconds."),
                         ("decision", "Too short.", "SQLite"),
                         ("status", "Accepted.", "Accepted"))
    assert result.exit_code == 0, result.stderr
    assert sorted(c["quote"] for c in out["claims"]) == ["Accepted", "We will keep the cache in SQLite."]
    assert out["audit"]["dropped"] == 1 and out["audit"]["rejected"] == 1  # too short; no dimension
    nodes = json.loads(cli("nodes", "--notes", "notes", "--json").stdout)
    assert "evil-id" not in {n["id"] for n in nodes} and not any("pwned" in n["tags"] for n in nodes)
    assert all(not n["title"].startswith("Evil") or n["level"] == 0 for n in nodes)
    again = cli("extract", "--commit", "cands.json", "--notes", "notes")
    assert again.exit_code == 1 and "committed already (2 claim(s)" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1


def test_a_rerun_supersedes_keeping_edited_claims_and_marking_vanished_ones(workspace: Path, cli) -> None:
    first, out1 = run_json(cli, "a.md", "--schema", "adr")
    by_quote = {c["quote"]: c for c in out1["claims"]}
    edited = by_quote["We will keep the cache in SQLite."]
    path = next(p for p in notes_of(workspace, "claims") if edited["claim_id"] in p.read_text())
    path.write_text(path.read_text().replace("\nWe will keep the cache in SQLite.\n",
                                             "\nThe cache lives in SQLite.\n", 1))
    gone = by_quote["We need a store that survives restarts."]
    next(p for p in notes_of(workspace, "claims") if gone["claim_id"] in p.read_text()).unlink()
    source = workspace.parent / "a.md"
    source.write_text(SOURCE_A.replace("- The cache file must be migrated when its shape changes.\n", "")
                      .replace("# Use SQLite for the cache\n", "# Use SQLite for the cache\n\nA preface.\n")
                      + "- Backups copy one file from now on.\n", encoding="utf-8")
    second, out2 = run_json(cli, "a.md", "--schema", "adr")
    assert second.exit_code == 0, second.stderr
    ids = {c["quote"]: c["claim_id"] for c in out2["claims"]}
    assert ids["We will keep the cache in SQLite."] == edited["claim_id"]  # same note, same ID
    assert "The cache lives in SQLite." in path.read_text()  # the person's edit survives
    assert "We need a store that survives restarts." not in ids  # deleted by the person: not written again
    assert "Backups copy one file from now on." in ids  # new
    text = source.read_text(encoding="utf-8")
    props = next(n for n in quote_nodes(workspace) if n.id == edited["quote_id"]).properties
    assert text[int(props["START"]):int(props["END"])] == "We will keep the cache in SQLite."
    vanished = by_quote["The cache file must be migrated when its shape changes."]
    note = next(p for p in notes_of(workspace, "claims") if vanished["claim_id"] in p.read_text())
    assert f":VANISHED: {out2['run']}" in note.read_text()
    hubs = sorted((workspace / "extractions").glob("*/hub-00-a.org"))
    new_hub = next(h for h in hubs if out2["run"] in str(h)).read_text()
    old_hub_id = parse_org(next(h for h in hubs if out1["run"] in str(h)).read_text(), "h").nodes[0].id
    assert f"[[id:{old_hub_id}]" in new_hub and "No longer found (1)" in new_hub
    assert f"[[id:{edited['claim_id']}]" in new_hub
    new = {c["claim_id"] for c in out2["claims"]} - {c["claim_id"] for c in out1["claims"]}
    assert len(notes_of(workspace, "claims")) == len(out1["claims"]) - 1 + len(new)  # nothing written twice


def test_deleting_a_claim_leaves_doctor_clean_and_index_takes_it_off_the_hub(workspace: Path, cli) -> None:
    _, out = run_json(cli, "a.md", "--schema", "adr")
    claim = out["claims"][0]
    next(p for p in notes_of(workspace, "claims") if claim["claim_id"] in p.read_text()).unlink()
    doctor = cli("doctor", "--notes", "notes", "--json")
    assert doctor.exit_code == 0, doctor.stdout
    assert not [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "broken-link"]
    assert cli("index", "--no-embed", "--quiet", "--notes", "notes").exit_code == 0
    hub = next((workspace / "extractions").glob("*/hub-00-a.org")).read_text()
    assert claim["claim_id"] not in hub
    report = json.loads(cli("doctor", "--notes", "notes", "--json").stdout)
    assert not [f for f in report["findings"] if f["check"] in ("broken-link", "deleted-claim")]
    audit = json.loads(cli("audit", out["run"], "--notes", "notes", "--json").stdout)
    assert audit["missing"] == 0 and audit["quotes"] == len(out["claims"]) - 1


def test_deleted_shapes_are_demoted_offline_only_with_the_flag(workspace: Path, cli, monkeypatch) -> None:
    (workspace / "orgkit.toml").write_text("[feedback]\nmin_events = 1\n", encoding="utf-8")
    pros = ["it needs no server at all", "the team knows Postgres well", "backups are simple files",
            "the license allows every use"]
    options = "".join(f"- Option {n} would mean that {why}.\n" for n, why in enumerate(pros))
    doc = SOURCE_A.replace("## Consequences", "## Considered Options\n\n" + options + "\n## Consequences")
    for name in ("c.md", "d.md", "e.md"):
        (workspace.parent / name).write_text(doc.replace("cache", "cache " + name), encoding="utf-8")
    _, out = run_json(cli, "c.md", "--schema", "adr")
    shaped = [c for c in out["claims"] if c["claim"].startswith("Option")]
    assert len(shaped) >= 1  # of four alike options the first stands out (offline.near_best)
    for claim in shaped:
        next(p for p in notes_of(workspace, "claims") if claim["claim_id"] in p.read_text()).unlink()
    plain = lambda o: [(c["dimension"], c["claim"], c["start"]) for c in o["claims"]]
    _, off = run_json(cli, "d.md", "--schema", "adr")
    _, on = run_json(cli, "e.md", "--schema", "adr", "--use-extraction-feedback")
    assert [c for c in plain(on) if c[1].startswith("Option")] == []
    assert [c for c in plain(off) if c[1].startswith("Option")] != []
    assert {c[1] for c in plain(on)} < {c[1].replace("d.md", "e.md") for c in plain(off)}
    from orgkit.extract.offline import extract_offline
    from orgkit.extract.schema import resolve_schema
    from orgkit.extract.units import segment

    text = (workspace.parent / "d.md").read_text(encoding="utf-8")
    picks = extract_offline(segment(text), resolve_schema(workspace, "adr"))
    assert [(p.claim, p.start) for p in picks] == [(c[1], c[2]) for c in plain(off)]  # flag off: as if no events


def test_the_model_reads_each_source_once_with_every_dimension(workspace: Path, cli, llm_server) -> None:
    llm_server.respond = lambda body: ({"verdicts": []} if "verdicts" in body["messages"][-1]["content"]
                                       else {"claims": []})
    result, _ = run_json(cli, "a.md", "b.md", "--schema", "adr", env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert result.exit_code == 0, result.stderr
    texts = [(workspace.parent / n).read_text(encoding="utf-8") for n in ("a.md", "b.md")]
    prompts = [" ".join(m["content"] for m in r["messages"]) for r in llm_server.requests]
    for text in texts:
        assert sum(p.count(text) for p in prompts) == 1  # one request per source, all dimensions in it
    extractor = [p for p in prompts if any(t in p for t in texts)]
    assert len(extractor) == 2 and all(f"- {d}:" in p for p in extractor
                                       for d in ("problem", "decision", "alternatives", "consequences", "status"))
    assert all(r["response_format"]["type"] == "json_schema" for r in llm_server.requests)
    assert llm_server.prompt_chars() == sum(len(p) for p in prompts) - sum(len(r["messages"]) - 1
                                                                           for r in llm_server.requests)


def test_a_moved_claim_note_is_followed_not_taken_for_deleted(workspace: Path, cli) -> None:
    _, out = run_json(cli, "a.md", "--schema", "adr")
    claim = out["claims"][0]
    path = next(p for p in notes_of(workspace, "claims") if claim["claim_id"] in p.read_text())
    path.rename(workspace / "kept-claim.org")
    assert cli("index", "--no-embed", "--quiet", "--notes", "notes").exit_code == 0
    hub = next((workspace / "extractions").glob("*/hub-00-a.org")).read_text()
    assert f"[[id:{claim['claim_id']}]" in hub
    audit = json.loads(cli("audit", out["run"], "--notes", "notes", "--json").stdout)
    assert audit["missing"] == 0 and audit["verified"] == len(out["claims"])

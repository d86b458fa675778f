"""Extraction runs against a real loopback chat server, the offline extractor, plan/commit, audits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_server import Canned
from orgkit.org import parse_org

ORGKIT = [sys.executable, "-c", "from orgkit.cli import main; main()"]

SOURCE_A = """# Use SQLite for the cache

## Status

Accepted

## Context

The cache is rebuilt on every start, which takes minutes.
We need a store that survives restarts.

## Decision

We will keep the cache in SQLite.

## Consequences

- Starts take seconds.
- The cache file must be migrated when its shape changes.
"""

SOURCE_B = """# Drop the XML export

## Context

Nobody has used the XML export since 2019.

## Decision

We will remove the XML export.
"""


@pytest.fixture
def workspace(extraction_dir: Path) -> Path:
    notes = extraction_dir / "notes"
    notes.mkdir()
    (extraction_dir / "a.md").write_text(SOURCE_A, encoding="utf-8")
    (extraction_dir / "b.md").write_text(SOURCE_B, encoding="utf-8")
    return notes


def claims_reply(*items: tuple[str, str, str]) -> dict:
    return {"claims": [{"dimension": d, "claim": c, "quote": q} for d, c, q in items]}


def notes_of(notes: Path, kind: str) -> list[Path]:
    return sorted((notes / "extractions").glob(f"*/{kind}/*.org"))


def quote_nodes(notes: Path) -> list:
    """Every quote node: the one heading of each claim note."""
    return [n for p in notes_of(notes, "claims") for n in parse_org(p.read_text(encoding="utf-8"), str(p)).nodes
            if n.level == 1]


def run_json(cli, *args: str, env: dict | None = None):
    result = cli("extract", *args, "--notes", "notes", "--json", env=env)
    return result, (json.loads(result.stdout) if result.stdout.strip() else None)


def test_offline_run_writes_linked_tagged_claim_and_quote_notes(workspace: Path, cli) -> None:
    result, out = run_json(cli, "a.md", "b.md", "--schema", "adr")
    assert result.exit_code == 0, result.stderr
    assert "offline extractor" in result.stderr
    assert set(out) == {"run", "claims", "audit", "fit"}
    assert out["fit"] == {"digest": "prior", "verdicts": 0, "documents": 0, "threshold": 0.5, "caps": {},
                          "min_score": 0.5}
    texts = {"a.md": SOURCE_A, "b.md": SOURCE_B}
    for claim in out["claims"]:
        assert set(claim) == {"source", "dimension", "claim", "quote", "start", "end", "claim_id", "quote_id",
                              "score"}
        assert claim["score"] >= 0.5
        assert texts[claim["source"]][claim["start"]:claim["end"]] == claim["quote"]
    dims = {(c["source"], c["dimension"]) for c in out["claims"]}
    assert {("a.md", "adr_status"), ("a.md", "adr_problem"), ("a.md", "adr_decision"), ("a.md", "adr_consequences"),
            ("b.md", "adr_decision")} <= dims  # the schema's tags, the machine keys
    status = next(c for c in out["claims"] if c["dimension"] == "adr_status")
    assert status["quote"] == "Accepted"
    assert out["audit"]["verified"] == out["audit"]["quotes"] == len(out["claims"])
    # one file per claim: the claim is its node, the quote its one heading
    assert len(notes_of(workspace, "claims")) == len(out["claims"]) and not notes_of(workspace, "quotes")
    quote = quote_nodes(workspace)[0]
    assert {"quote"} < set(quote.tags) and quote.properties["SOURCE_SHA256"]
    claim = next(c for c in out["claims"] if c["quote_id"] == quote.id)
    assert (int(quote.properties["START"]), int(quote.properties["END"])) == (claim["start"], claim["end"])
    # claim -> quote, claim -> hub, hub -> every claim, all id links the graph sees
    links = json.loads(cli("links", "--notes", "notes", "--json").stdout)
    out_of = lambda node: {l["dest"] for l in links if l["source"] == node and l["type"] == "id"}
    hub = next(p for p in (workspace / "extractions").glob("*/hub-00-a.org"))
    hub_id = parse_org(hub.read_text(encoding="utf-8"), str(hub)).nodes[0].id
    assert claim["quote_id"] in out_of(claim["claim_id"]) and hub_id in out_of(claim["claim_id"])
    assert {c["claim_id"] for c in out["claims"] if c["source"] == "a.md"} <= out_of(hub_id)
    nodes = json.loads(cli("nodes", "--notes", "notes", "--json").stdout)
    tagged = [n for n in nodes if "adr_decision" in n["tags"]]
    assert len(tagged) == 2 * sum(c["dimension"] == "adr_decision" for c in out["claims"])


def test_corrective_retry_succeeds(workspace: Path, cli, llm_server) -> None:
    llm_server.reply("Sure! Here are the claims.",
                     claims_reply(("decision", "SQLite holds the cache.", "We will keep the cache in SQLite.")),
                     {"verdicts": [{"item": 1, "supported": True}]})
    result, out = run_json(cli, "a.md", "--schema", "adr", env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert result.exit_code == 0, result.stderr
    assert [c["claim"] for c in out["claims"]] == ["SQLite holds the cache."]
    assert len(llm_server.requests) == 3  # extractor twice, auditor once
    assert "not valid JSON" in llm_server.requests[1]["messages"][-1]["content"]


def test_both_attempts_failing_fails_the_task_and_writes_nothing(workspace: Path, cli, llm_server) -> None:
    llm_server.reply("no json", "still no json")
    result, out = run_json(cli, "a.md", "--schema", "adr", env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert result.exit_code == 1
    assert out["claims"] == [] and out["audit"]["failed"][0]["task"] == "extract:0"
    assert "after one corrective retry" in out["audit"]["failed"][0]["error"]
    assert "--resume" in result.stderr
    assert notes_of(workspace, "claims") == []


def test_a_length_cut_reply_fails_the_task(workspace: Path, cli, llm_server) -> None:
    llm_server.reply(Canned('{"claims": [{"dimension": "decision", "claim": "We', finish_reason="length"))
    result, out = run_json(cli, "a.md", "--schema", "adr", env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert result.exit_code == 1 and "cut off" in out["audit"]["failed"][0]["error"]
    assert len(llm_server.requests) == 1 and notes_of(workspace, "claims") == []


def test_ungrounded_quotes_are_dropped_and_folded_ones_kept(workspace: Path, cli, llm_server) -> None:
    llm_server.reply(claims_reply(
        ("problem", "Restarts are slow.", "The cache is rebuilt on every start,   which takes minutes."),
        ("decision", "Postgres holds the cache.", "We will keep the cache in Postgres.")),
        {"verdicts": [{"item": 1, "supported": False, "reason": "says nothing of slowness"}]})
    result, out = run_json(cli, "a.md", "--schema", "adr", env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert result.exit_code == 0, result.stderr
    assert [c["quote"] for c in out["claims"]] == ["The cache is rebuilt on every start, which takes minutes."]
    assert out["audit"]["dropped"] == 1 and len(quote_nodes(workspace)) == 1
    assert out["audit"]["flags"] == [{"claim_id": out["claims"][0]["claim_id"], "reason": "says nothing of slowness"}]


def test_a_note_without_a_schema_tag_is_rejected(workspace: Path, cli, llm_server) -> None:
    llm_server.reply(claims_reply(("decision", "SQLite.", "We will keep the cache in SQLite."),
                                  ("mood", "Calm.", "Starts take seconds.")), {"verdicts": []})
    result, out = run_json(cli, "a.md", "--schema", "adr", env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert out["audit"]["rejected"] == 1 and [c["dimension"] for c in out["claims"]] == ["adr_decision"]
    for path in notes_of(workspace, "claims"):
        assert ":adr_decision:" in path.read_text(encoding="utf-8")


def test_show_prompt_returns_every_prompt_sent(workspace: Path, cli, llm_server) -> None:
    llm_server.reply(claims_reply(), {"verdicts": []})
    result, out = run_json(cli, "b.md", "--schema", "adr", "--show-prompt",
                           env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert [p["role"] for p in out["prompts"]] == ["extractor"]
    assert "Nobody has used the XML export" in out["prompts"][0]["messages"][1]["content"]
    assert "verbatim" in out["prompts"][0]["messages"][0]["content"]
    human = cli("extract", "b.md", "--schema", "adr", "--show-prompt", "--notes", "notes",
                env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert "===== prompt to the extractor" in human.stdout


def test_capability_disabled(workspace: Path, cli, monkeypatch) -> None:
    monkeypatch.delenv("ORGKIT_EXTRACTION")
    commands = lambda: {line.split()[0] for line in cli("--help").stdout.split("Commands:")[1].splitlines()
                        if line.startswith("  ") and not line.startswith("   ")}
    assert not {"extract", "schema", "audit"} & commands()
    result = cli("extract", "a.md", "--schema", "adr", "--notes", "notes")
    assert result.exit_code == 1 and "ORGKIT_EXTRACTION=1" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    ops = json.loads(cli("ops", "--json").stdout)
    assert not {"extract", "audit", "schema_list"} & {o["name"] for o in ops}
    from orgkit.ops import OpContext
    from orgkit.serve import handle
    ctx = OpContext(workspace)
    assert "capability" in handle(ctx, json.dumps({"op": "schema_list"}))["error"]
    assert "schema" in handle(ctx, json.dumps({"op": "search", "query": "x", "schema": "adr"}))["error"]
    assert (workspace / "extractions").exists() is False
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    assert {"extract", "schema", "audit"} <= commands()
    assert "extract" in {o["name"] for o in json.loads(cli("ops", "--json").stdout)}


def test_a_text_given_twice_is_extracted_once(workspace: Path, cli) -> None:
    """A claim's IDs come from the text it quotes: the second copy would give two notes one ID."""
    result = cli("extract", "a.md", "a.md", "--schema", "adr", "--notes", "notes", "--json")
    assert result.exit_code == 0, result.stderr
    assert "a.md: the same text as a.md, extracted once" in result.stderr
    assert [s["source"] for s in json.loads(result.stdout)["audit"]["sources"]] == ["a.md"]
    ids = [line.split()[1] for p in (workspace / "notes").rglob("*.org")
           for line in p.read_text(encoding="utf-8").splitlines() if line.startswith(":ID:")]
    assert len(ids) == len(set(ids))


def test_plan_then_commit_runs_the_checks(workspace: Path, cli) -> None:
    result = cli("extract", "a.md", "--schema", "adr", "--plan", "--notes", "notes", "--json")
    plan = json.loads(result.stdout)
    extract = next(t for t in plan["tasks"] if t["id"] == "extract:0")
    assert extract["context"]["text"] == SOURCE_A and "problem" in extract["context"]["rubric"]
    assert [t["id"] for t in plan["tasks"]][-1] == "run-note"
    assert next(t for t in plan["tasks"] if t["id"] == "scribe:0")["depends_on"] == ["extract:0"]
    candidates = {"run": plan["run"], "candidates": [
        {"source": "a.md", "dimension": "decision", "claim": "SQLite.", "quote": "We will keep the cache in SQLite."},
        {"source": "a.md", "dimension": "decision", "claim": "Made up.", "quote": "We will rewrite it in Rust."},
        {"source": "a.md", "dimension": "vibe", "claim": "Untagged.", "quote": "Starts take seconds."}]}
    (workspace.parent / "cands.json").write_text(json.dumps(candidates), encoding="utf-8")
    result, out = run_json(cli, "--commit", "cands.json")
    assert result.exit_code == 0, result.stderr
    assert [c["claim"] for c in out["claims"]] == ["SQLite."]
    assert out["audit"]["dropped"] == 1 and out["audit"]["rejected"] == 1
    (workspace.parent / "bad.json").write_text("{\"run\": 1}", encoding="utf-8")
    bad = cli("extract", "--commit", "bad.json", "--notes", "notes")
    assert bad.exit_code == 1 and "expected" in bad.stderr


def test_audit_reanchors_moved_quotes_and_marks_lost_ones_stale(workspace: Path, cli) -> None:
    result, out = run_json(cli, "a.md", "--schema", "adr")
    moved = next(c for c in out["claims"] if c["quote"] == "We will keep the cache in SQLite.")
    kept = next(c for c in out["claims"] if c["dimension"] == "adr_status")
    source = workspace.parent / "a.md"
    source.write_text(SOURCE_A.replace("# Use SQLite", "# Preface\n\nA new line.\n\n# Use SQLite")
                      .replace("Accepted", "Superseded"), encoding="utf-8")
    report = json.loads(cli("audit", out["run"], "--notes", "notes", "--json").stdout)
    assert report["reanchored"] >= 1 and report["stale"] == 1
    text = source.read_text(encoding="utf-8")
    quote_note = next(p for p in notes_of(workspace, "claims") if moved["quote_id"] in p.read_text())
    props = next(n for n in quote_nodes(workspace) if n.id == moved["quote_id"]).properties
    start, end = int(props["START"]), int(props["END"])
    assert text[start:end] == moved["quote"] and start > moved["start"]
    assert f"characters {start}-{end}." in quote_note.read_text(encoding="utf-8")  # every place the offsets are
    assert f"characters {moved['start']}-" not in quote_note.read_text(encoding="utf-8")
    stale_note = next(p for p in notes_of(workspace, "claims") if kept["quote_id"] in p.read_text())
    stale = parse_org(stale_note.read_text(encoding="utf-8"), str(stale_note)).nodes
    assert [n.properties.get("STALE") for n in stale] == ["t", "t"]  # claim and quote alike
    hub = next((workspace / "extractions").glob("*/hub-00-a.org")).read_text(encoding="utf-8")
    assert f"(quote lost) [[id:{kept['claim_id']}]" in hub
    again = json.loads(cli("audit", "--all", "--notes", "notes", "--json").stdout)
    assert again["stale"] == 1 and again["verified"] == again["quotes"] - 1


def test_resume_after_a_kill_finishes_without_duplicate_notes(workspace: Path, llm_server) -> None:
    slow = {"on": True}

    def respond(body: dict):
        text = body["messages"][-1]["content"]
        if "verdicts" in text:
            return {"verdicts": []}
        if "XML export" in text:
            if slow["on"]:
                time.sleep(60)
            return claims_reply(("decision", "Remove XML.", "We will remove the XML export."))
        return claims_reply(("decision", "SQLite.", "We will keep the cache in SQLite."),
                            ("status", "Accepted.", "Accepted"))

    llm_server.respond = respond
    env = {**os.environ, "ORGKIT_LLM_ENDPOINT": llm_server.url, "ORGKIT_EXTRACTION": "1"}
    proc = subprocess.Popen([*ORGKIT, "extract", "a.md", "b.md", "--schema", "adr", "--notes", "notes", "--json"],
                            cwd=workspace.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and len(notes_of(workspace, "claims")) < 2:
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(notes_of(workspace, "claims")) == 2
    slow["on"] = False
    run = next((workspace / "orgkit-data" / "extract" / "runs").iterdir()).name
    done = subprocess.run([*ORGKIT, "extract", "--resume", run, "--notes", "notes", "--json"],
                          cwd=workspace.parent, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert sorted(c["claim"] for c in out["claims"]) == ["Accepted.", "Remove XML.", "SQLite."]
    assert len(notes_of(workspace, "claims")) == 3 and len(quote_nodes(workspace)) == 3
    ids = [parse_org(p.read_text(), str(p)).nodes[0].id for p in notes_of(workspace, "claims")]
    assert len(set(ids)) == 3
    extractor_calls = [r for r in llm_server.requests if "verdicts" not in r["messages"][-1]["content"]]
    assert sum("cache in SQLite" in r["messages"][-1]["content"] for r in extractor_calls) == 1
    assert (workspace / "extractions" / run / "run.org").is_file()


def test_offline_extraction_of_the_adr_corpus_is_grounded_and_agrees_with_the_annotation(
        tmp_path: Path, cli, monkeypatch) -> None:
    from conftest import REPO, shared_path

    corpus = tmp_path / "adr"
    corpus.mkdir()
    for path in sorted(shared_path("corpora", "adr").glob("[0-9]*.md")):
        (corpus / path.name).write_bytes(path.read_bytes())
    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    monkeypatch.delenv("ORGKIT_LLM_ENDPOINT", raising=False)
    monkeypatch.delenv("ORGKIT_MODEL_PATH", raising=False)
    started = time.perf_counter()
    result = cli("extract", *sorted(str(p) for p in corpus.iterdir()), "--schema", "adr",
                 "--notes", str(notes), "--json")
    assert time.perf_counter() - started < 120 and result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    texts = {str(p): p.read_text(encoding="utf-8") for p in corpus.iterdir()}
    assert all(texts[c["source"]][c["start"]:c["end"]] == c["quote"] for c in out["claims"])
    assert out["audit"]["verified"] == len(out["claims"]) and out["audit"]["stale"] == 0
    for dim in ("adr_problem", "adr_decision", "adr_consequences", "adr_status"):
        assert len({c["source"] for c in out["claims"] if c["dimension"] == dim}) >= 13, dim
    sys.path.insert(0, str(REPO / "bench"))
    from bench_extract import main_points, score

    predictions: dict[str, list] = {}
    for c in out["claims"]:
        predictions.setdefault(Path(c["source"]).name, []).append((c["dimension"][4:], c["start"], c["end"]))
    gold = json.loads((REPO / "bench" / "extract_gold.json").read_text(encoding="utf-8"))
    overall = score(predictions, gold)["all"]
    assert overall["precision"] >= 0.7, overall
    for file in ("extract_gold.json", "extract_heldout.json"):  # one quote per point, the quote mostly the point
        gold = json.loads((REPO / "bench" / file).read_text(encoding="utf-8"))
        strict = score(predictions, gold, strict_mode=True)["all"]
        main = score(predictions, main_points(gold, 2), strict_mode=True)["all"]  # each dimension's main points
        assert strict["precision"] >= 0.55 and main["recall"] >= 0.55, (file, strict, main)

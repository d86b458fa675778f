"""Extraction that learns from a reviewer: verdicts stored whole or refused by line, a scorer fitted on
them that changes what is taken on the next document, the operating point and its explanation, refits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orgkit.errors import OrgkitError, Refused
from orgkit.ops import OpContext, call
from orgkit.tokens import Identity

SCHEMA = """:PROPERTIES:
:ID: 6f1d3c2a-0b7e-4d51-9a41-2c8e5b7d9f10
:ORGKIT_SCHEMA: moves
:GROUNDED: t
:END:
#+title: Moves and their risks

* Decision
:PROPERTIES:
:TAG: mv_decision
:HEADINGS: Decision
:END:
What was decided.

* Risk
:PROPERTIES:
:TAG: mv_risk
:END:
Something that may go wrong.
"""

FIRST = """# Move the queue

## Decision

We will move the queue to Redis.

## Worries

The Redis node may run out of memory under load.
Failover can lose the last second of messages.

## Notes

The team met on Tuesday to discuss it.
"""

SECOND = """# Move the sessions

## Decision

We will keep the sessions in Postgres.

## Worries

A slow vacuum may stall the sessions table for minutes.
Connection limits could refuse logins at peak hours.

## Notes

The meeting took an hour and everyone came.
"""


@pytest.fixture
def workspace(extraction_dir: Path) -> Path:
    notes = extraction_dir / "notes"
    (notes / "sources").mkdir(parents=True)
    (notes / "sources" / "first.md").write_text(FIRST, encoding="utf-8")
    (notes / "sources" / "second.md").write_text(SECOND, encoding="utf-8")
    (extraction_dir / "moves.org").write_text(SCHEMA, encoding="utf-8")
    return notes


def verdict(source: str, tag: str, quote: str, said: str = "accept") -> dict:
    return {"source": source, "dimension": tag, "quote": quote, "verdict": said}


GOOD = [verdict("notes/sources/first.md", "mv_risk", "The Redis node may run out of memory under load."),
        verdict("notes/sources/first.md", "mv_risk", "Failover can lose the last second of messages."),
        verdict("notes/sources/first.md", "mv_decision", "We will move the queue to Redis."),
        verdict("notes/sources/first.md", "mv_risk", "The team met on Tuesday to discuss it.", "reject")]


def write_lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def run(cli, *args: str):
    result = cli(*args, "--notes", "notes", "--json")
    return result, (json.loads(result.stdout) if result.exit_code == 0 and result.stdout.strip() else None)


def data_dir(notes: Path) -> Path:
    return notes / "orgkit-data"


def risks(claims: list[dict], source: str) -> set[str]:
    return {c["quote"] for c in claims if c["dimension"] == "mv_risk" and c["source"].endswith(source)}


def test_learn_stores_the_verdicts_per_schema_and_guidance_shows_them(workspace: Path, cli) -> None:
    result, out = run(cli, "extract", "learn", str(write_lines(workspace.parent / "v.jsonl", GOOD)),
                      "--schema", "moves.org")
    assert result.exit_code == 0, result.stderr
    assert (out["verdicts"], out["accept"], out["reject"], out["sources"], out["new"]) == (4, 3, 1, 1, 4)
    assert out["fit"]["verdicts"] == 4 and out["fit"]["documents"] == 1 and out["fit"]["digest"] != "prior"
    stored = [json.loads(line) for line in
              (data_dir(workspace) / "feedback" / "verdicts" / "moves.jsonl").read_text().splitlines()]
    assert [(e["source"], e["field"], e["action"], e["after"]) for e in stored] == [
        ("verdict", v["dimension"], v["verdict"], v["quote"]) for v in GOOD]
    assert all(e["source_path"] == "sources/first.md" and e["schema"] == "moves" for e in stored)
    again, out = run(cli, "extract", "learn", str(workspace.parent / "v.jsonl"), "--schema", "moves.org")
    assert again.exit_code == 0 and out["new"] == 0  # the same verdicts are the same events
    shown, guidance = run(cli, "guidance")
    assert guidance["verdicts"] == [{"schema": "moves", "verdicts": 4, "accept": 3, "reject": 1, "sources": 1}]
    assert "verdicts on moves: 4 (3 accepted, 1 rejected) on 1 sources" in cli("guidance", "--notes", "notes").stdout


def test_a_schema_named_like_a_path_keeps_its_verdicts_and_fit_in_their_folders(workspace: Path, cli) -> None:
    (workspace.parent / "moves.org").write_text(SCHEMA.replace(":ORGKIT_SCHEMA: moves", ":ORGKIT_SCHEMA: ../../up"),
                                                encoding="utf-8")
    result = cli("extract", "learn", str(write_lines(workspace.parent / "v.jsonl", GOOD)), "--schema", "moves.org",
                 "--notes", "notes")
    assert result.exit_code == 0, result.stderr
    data = data_dir(workspace)
    assert [p.name for p in (data / "feedback" / "verdicts").glob("*.jsonl")] == [".._.._up.jsonl"]
    assert {p.name for p in (data / "extract" / "fits").iterdir()} == {".._.._up.json", ".._.._up.org"}
    assert not list(data.glob("up.*")) and not list(data.parent.glob("up.*"))


@pytest.mark.parametrize("bad, message", [
    ({"source": "notes/sources/first.md", "dimension": "mv_risk", "verdict": "accept"}, "missing field 'quote'"),
    (verdict("notes/sources/gone.md", "mv_risk", "x"), "source not found: notes/sources/gone.md"),
    (verdict("notes/sources/first.md", "mv_risk", "Nothing like this is written."), "the quote is not in"),
    (verdict("notes/sources/first.md", "mv_status", "We will move the queue to Redis."), "unknown dimension"),
    (verdict("notes/sources/first.md", "mv_risk", "We will move the queue to Redis.", "maybe"), "unknown verdict"),
    ("{not json", "not a JSON object"),
])
def test_a_bad_line_is_refused_by_its_number_and_nothing_is_stored(workspace: Path, cli, bad, message) -> None:
    path = write_lines(workspace.parent / "v.jsonl", GOOD[:2] + [bad] + GOOD[2:])
    result = cli("extract", "learn", str(path), "--schema", "moves.org", "--notes", "notes")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "v.jsonl:3: " in lines[0] and message in lines[0], result.stderr
    assert not (data_dir(workspace) / "feedback").exists()
    assert not (data_dir(workspace) / "extract").exists()


def test_the_fit_changes_what_is_taken_on_the_next_document(workspace: Path, cli, tiny_model) -> None:
    result, before = run(cli, "extract", "notes/sources/second.md", "--schema", "moves.org")
    assert result.exit_code == 0, result.stderr
    assert risks(before["claims"], "second.md") == set()  # no section names the risks: today's rules miss them
    assert before["fit"]["digest"] == "prior"
    learned, _ = run(cli, "extract", "learn", str(write_lines(workspace.parent / "v.jsonl", GOOD)),
                     "--schema", "moves.org")
    assert learned.exit_code == 0, learned.stderr
    result, after = run(cli, "extract", "notes/sources/second.md", "--schema", "moves.org")
    assert result.exit_code == 0, result.stderr
    worries = {"A slow vacuum may stall the sessions table for minutes.",
               "Connection limits could refuse logins at peak hours."}
    assert risks(after["claims"], "second.md") and risks(after["claims"], "second.md") <= worries
    assert not any("meeting" in c["quote"] for c in after["claims"])
    text = SECOND
    assert all(text[c["start"]:c["end"]] == c["quote"] and c["score"] >= after["fit"]["min_score"]
               for c in after["claims"])
    assert after["fit"]["verdicts"] == 4 and after["fit"]["digest"] != "prior"
    run_file = next((data_dir(workspace) / "extract" / "runs").glob(f"{after['run']}/run.json"))
    assert json.loads(run_file.read_text())["fit"]["digest"] == after["fit"]["digest"]


def test_min_score_sets_the_operating_point_and_explain_says_why(workspace: Path, cli) -> None:
    run(cli, "extract", "learn", str(write_lines(workspace.parent / "v.jsonl", GOOD)), "--schema", "moves.org")
    _, usual = run(cli, "extract", "notes/sources/second.md", "--schema", "moves.org")
    _, strict = run(cli, "extract", "notes/sources/second.md", "--schema", "moves.org", "--min-score", "0.999")
    assert usual["claims"] and not strict["claims"] and strict["fit"]["min_score"] == 0.999
    written = sorted(workspace.rglob("*"))
    result, explained = run(cli, "extract", "notes/sources/second.md", "--schema", "moves.org", "--explain")
    assert result.exit_code == 0, result.stderr
    rows = explained["sources"][0]["units"]
    assert {r["dimension"] for r in rows} == {"mv_decision", "mv_risk"}  # the schema's tags are the keys
    taken = {(r["dimension"], r["quote"]) for r in rows if r["taken"]}
    assert taken == {(c["dimension"], c["quote"]) for c in usual["claims"]}
    assert all(r["score"] >= explained["min_score"] for r in rows if r["taken"])
    assert set(rows[0]["features"]) == set(rows[0]["weights"]) >= {"prior", "section", "accepted_like"}
    assert sorted(workspace.rglob("*")) == written  # explaining writes nothing
    text = cli("extract", "notes/sources/second.md", "--schema", "moves.org", "--explain", "--notes", "notes").stdout
    assert "taken" in text and "left" in text and "bias" in text
    assert "claims a document gives at most: Decision 2, Risk 4" in text  # the reviewer's density, doubled


def claim_file(notes: Path, claim_id: str) -> Path:
    return next(p for p in (notes / "extractions").glob("*/claims/*.org") if claim_id in p.read_text(encoding="utf-8"))


def test_evolve_refits_on_every_kind_of_verdict_and_a_run_records_its_fit(workspace: Path, cli) -> None:
    run(cli, "extract", "learn", str(write_lines(workspace.parent / "v.jsonl", GOOD)), "--schema", "moves.org")
    _, out = run(cli, "extract", "notes/sources/second.md", "--schema", "moves.org")
    first = out["fit"]["digest"]
    decision = next(c for c in out["claims"] if c["dimension"] == "mv_decision")
    risk = next(c for c in out["claims"] if c["dimension"] == "mv_risk")
    claim_file(workspace, risk["claim_id"]).unlink()  # deleted: its quote rejected
    retagged = claim_file(workspace, decision["claim_id"])  # retagged: a risk, not a decision
    retagged.write_text(retagged.read_text(encoding="utf-8").replace(":mv_decision:", ":mv_risk:"), encoding="utf-8")
    assert cli("index", "--no-embed", "--notes", "notes").exit_code == 0
    result, evolved = run(cli, "evolve")
    assert result.exit_code == 0, result.stderr
    assert [(f["schema"], f["verdicts"]) for f in evolved["fits"]] == [("moves", 4 + 1 + 2)]
    assert evolved["fits"][0]["digest"] != first
    _, again = run(cli, "extract", "notes/sources/first.md", "--schema", "moves.org")
    assert again["fit"]["digest"] == evolved["fits"][0]["digest"] and again["fit"]["verdicts"] == 7


def test_on_a_server_learning_is_an_admins_call_inside_the_notes(workspace: Path, tmp_path: Path) -> None:
    (workspace / "moves.org").write_text(SCHEMA, encoding="utf-8")
    inside = [dict(v, source="sources/first.md") for v in GOOD]
    write_lines(workspace / "v.jsonl", inside)
    outside = tmp_path / "outside.md"
    outside.write_text(FIRST, encoding="utf-8")
    write_lines(workspace / "out.jsonl", [dict(GOOD[0], source=str(outside))])
    write_lines(tmp_path / "v-outside.jsonl", inside)

    def server_call(params: dict, role: str):
        ctx = OpContext(workspace, warm=True)
        ctx.surface = "http"
        try:
            return call(ctx, "extract_learn", params, identity=Identity("someone", role)).result
        finally:
            ctx.close()

    with pytest.raises(Refused, match="extract_learn needs the admin role"):
        server_call({"verdicts": "v.jsonl", "schema": "moves.org"}, "reviewer")
    with pytest.raises(OrgkitError, match=r"out.jsonl:1: 'source': .* is outside the notes dir"):
        server_call({"verdicts": "out.jsonl", "schema": "moves.org"}, "admin")
    with pytest.raises(OrgkitError, match="outside the notes dir"):
        server_call({"verdicts": str(tmp_path / "v-outside.jsonl"), "schema": "moves.org"}, "admin")
    assert not (data_dir(workspace) / "feedback").exists()
    stored = server_call({"verdicts": "v.jsonl", "schema": "moves.org"}, "admin")
    assert stored["verdicts"] == 4 and stored["fit"]["verdicts"] == 4


def test_the_verdicts_are_examples_in_the_models_prompt(workspace: Path, cli, llm_server) -> None:
    run(cli, "extract", "learn", str(write_lines(workspace.parent / "v.jsonl", GOOD)), "--schema", "moves.org")
    llm_server.reply({"claims": []}, {"verdicts": []})
    result = cli("extract", "notes/sources/second.md", "--schema", "moves.org", "--show-prompt", "--notes", "notes",
                 "--json", env={"ORGKIT_LLM_ENDPOINT": llm_server.url})
    assert result.exit_code == 0, result.stderr
    system = json.loads(result.stdout)["prompts"][0]["messages"][0]["content"]
    assert "A reviewer's verdicts" in system
    assert 'taken as Risk (mv_risk): "The Redis node may run out of memory under load."' in system
    assert 'not a claim as Risk (mv_risk): "The team met on Tuesday to discuss it."' in system


def test_at_the_fits_own_point_the_rules_picks_are_kept_and_a_given_cut_is_plain() -> None:
    from orgkit.extract.schema import parse_schema
    from orgkit.extract.scorer import candidates, choose, extract_scored, prior_fit, scored
    from orgkit.extract.units import segment

    schema = parse_schema(SCHEMA, Path("moves.org"), "test")
    doc = segment(FIRST, "markdown")
    fit = prior_fit(schema)
    ruled = {(p.dimension, p.quote) for p in extract_scored(doc, schema, fit)}
    assert ("Decision", "We will move the queue to Redis.") in ruled
    cands = scored(candidates(doc, schema, fit), fit)
    for c in cands:
        c.score = 0.1  # a fit that trusts nothing the rules take
    assert {(p.dimension, p.quote) for p in choose(doc, schema, cands, 0.5, fit)} == ruled
    assert all(p.score == 0.5 for p in choose(doc, schema, cands, 0.5, fit))  # counted at the cut
    assert choose(doc, schema, cands, 0.5, fit, rules=False) == []


def test_the_fits_operating_point_leans_toward_recall_while_half_the_claims_taken_are_accepted() -> None:
    from orgkit.extract.scorer import FLOOR, operating_point

    assert FLOOR == 0.5
    sure, likely, unlikely = [0.9] * 4, [0.32] * 6, [0.1] * 10
    chances = sure + likely + unlikely
    labels = [1.0] * 4 + [1.0] * 2 + [0.0] * 4 + [0.0] * 10
    # best F1 is at 0.9 (4 of 4 taken, F1 0.8; at 0.15 6 of 10, F1 0.75), but 6 of the 10 taken
    # at 0.15 are accepted: the cut goes down to there
    assert operating_point(chances, labels) == 0.15
    assert operating_point(chances, labels, held_out=False) == 0.9  # a lone document's own fit: best F1
    # claims spread thin: only the two sure ones reach half accepted, and the best-F1 cut is lower
    chances = [0.9] * 2 + [0.2] * 38
    labels = [1.0] * 2 + [1.0] * 8 + [0.0] * 30
    assert operating_point(chances, labels) == 0.2
    assert operating_point([0.7, 0.2], [0.0, 0.0]) == 0.5  # nothing accepted: the default

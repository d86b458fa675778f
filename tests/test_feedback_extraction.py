"""The feedback loop around extraction, on real files with the loopback model.

The golden file `tests/golden/extractor-prompt.json` holds the messages the
extractor got for `b.md` under the test's own schema and persona
(`tests/golden/decision-schema.org`, `extractor-persona.org`, so that tuning the
shipped ones does not move it), recorded with the code as it was before
extraction could take guidance: with the flag off, a run must send exactly these
bytes, whatever the guidance file says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orgkit.feedback.events import load_events
from orgkit import config

GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN = GOLDEN_DIR / "extractor-prompt.json"
SOURCES = {
    "b.md": "# Drop the XML export\n\n## Context\n\nNobody has used the XML export since 2019.\n\n"
            "## Decision\n\nWe will remove the XML export.\n",
    "c.md": "# Keep logs for a year\n\n## Context\n\nAuditors ask for last year's logs.\n\n"
            "## Decision\n\nWe will keep the logs for twelve months.\n",
    "d.md": "# Build with make\n\n## Context\n\nThe build script has grown past 900 lines.\n\n"
            "## Decision\n\nWe will build with make.\n",
    "e.md": "# Sign every release\n\n## Context\n\nA mirror served a tampered archive.\n\n"
            "## Decision\n\nWe will sign every release archive.\n",
}
BULLET = "State each decision with its reason from the context, as in “remove X because nobody uses it”."
GUIDANCE = ("* Extractor: extractor\n** Node Type: claim\n"
            "# cluster: sha256:ab12 source=override field=body events=3\n- Give each decision its reason.\n"
            "** Node Type: hub\n- Not for the extractor's prompt.\n"
            "* Extractor: librarian\n** Node Type: note\n- Not for the extractor either.\n")


@pytest.fixture
def workspace(extraction_dir: Path, monkeypatch) -> Path:
    notes = extraction_dir / "notes"
    notes.mkdir()
    for name, text in SOURCES.items():
        (extraction_dir / name).write_text(text, encoding="utf-8")
    for key in ("ORGKIT_USE_EXTRACTION_FEEDBACK", "ORGKIT_FEEDBACK_MIN_EVENTS"):
        monkeypatch.delenv(key, raising=False)
    return notes


def _respond(body: dict):
    """The loopback model: the auditor finds no problem, the guidance role gives BULLET, the
    extractor reports the document's decision sentence as a claim quoted verbatim."""
    system = body["messages"][0]["content"]
    if "check claims" in system:
        return {"verdicts": []}
    if "corrections of notes" in system:
        return {"bullet": BULLET}
    document = body["messages"][1]["content"].split("<<<\n", 1)[1]
    decision = re.search(r"^We will .*$", document, re.M).group(0)
    return {"claims": [{"dimension": "decision", "claim": decision.replace("We will", "The team will"),
                        "quote": decision}]}


def _golden_setup(notes: Path) -> str:
    """The test's own persona in the notes' overlay; returns the test's own schema file."""
    (notes / "personas").mkdir()
    (notes / "personas" / "extractor.org").write_text((GOLDEN_DIR / "extractor-persona.org").read_text(
        encoding="utf-8"), encoding="utf-8")
    (notes / "orgkit-data").mkdir()
    (notes / "orgkit-data" / "guidance.org").write_text(GUIDANCE, encoding="utf-8")
    return str(GOLDEN_DIR / "decision-schema.org")


def _extract(cli, server, *args: str, schema: str = "adr") -> dict:
    result = cli("extract", *args, "--schema", schema, "--notes", "notes", "--json",
                 env={"ORGKIT_LLM_ENDPOINT": server.url, "ORGKIT_LLM_MODEL": "m"})
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _extractor_requests(requests: list[dict]) -> list[list[dict]]:
    return [r["messages"] for r in requests if "check claims" not in r["messages"][0]["content"]
            and "corrections of notes" not in r["messages"][0]["content"]]


def test_flag_off_prompt_is_byte_identical_to_the_golden_file(workspace, cli, llm_server):
    schema = _golden_setup(workspace)
    llm_server.respond = _respond
    _extract(cli, llm_server, "b.md", schema=schema)
    (sent,) = _extractor_requests(llm_server.requests)
    assert json.dumps(sent, ensure_ascii=False) == json.dumps(json.loads(GOLDEN.read_text(encoding="utf-8")),
                                                              ensure_ascii=False)


def test_flag_on_prompt_carries_only_the_matching_slice(workspace, cli, llm_server):
    schema = _golden_setup(workspace)
    llm_server.respond = _respond
    _extract(cli, llm_server, "b.md", "--use-extraction-feedback", schema=schema)
    (sent,) = _extractor_requests(llm_server.requests)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sent[1] == golden[1]
    assert sent[0]["content"] == golden[0]["content"] + (
        "\n\nGuidance from people's corrections of earlier output (follow it where it applies):\n"
        "For claim notes:\n- Give each decision its reason.\n")


def test_corrections_of_three_documents_reach_the_next_extraction(workspace, cli, llm_server):
    """extract -> three claim notes from three documents edited the same way -> index twice
    -> three events -> evolve -> one bullet -> the next extraction with the flag carries it."""
    llm_server.respond = _respond
    first = _extract(cli, llm_server, "b.md", "c.md", "d.md")
    assert len(first["claims"]) == 3
    for claim in first["claims"]:
        path = next((workspace / "extractions").glob(f"*/claims/*{claim['claim_id'][:8]}.org"))
        text = path.read_text(encoding="utf-8")
        body = f"\n{claim['claim']}\n"
        assert body in text
        reason = {"b.md": "nobody has used it since 2019", "c.md": "auditors ask for last year's logs",
                  "d.md": "the build script has grown past 900 lines"}[Path(claim["source"]).name]
        path.write_text(text.replace(body, f"\n{claim['claim'].rstrip('.')}, because {reason}.\n"),
                        encoding="utf-8")
    for expected in (3, 0):
        indexed = cli("index", "--notes", "notes", "--no-embed", "--json")
        assert indexed.exit_code == 0, indexed.stderr
        assert json.loads(indexed.stdout)["feedback_events"] == expected
    events = load_events(config.load(workspace, env={}))
    assert len(events) == 3
    assert {(e.source, e.extractor, e.node_type, e.field, e.action) for e in events} == {
        ("override", "extractor", "claim", "body", "edit")}
    assert len({e.source_path for e in events}) == 3
    evolved = cli("evolve", "--notes", "notes", "--json",
                  env={"ORGKIT_LLM_ENDPOINT": llm_server.url, "ORGKIT_LLM_MODEL": "m"})
    assert evolved.exit_code == 0, evolved.stderr
    (cluster,) = json.loads(evolved.stdout)["clusters"]
    assert (cluster["extractor"], cluster["node_type"], cluster["status"], cluster["bullet"]) == (
        "extractor", "claim", "new", BULLET)
    guidance = (workspace / "orgkit-data" / "guidance.org").read_text(encoding="utf-8")
    assert f"* Extractor: extractor\n** Node Type: claim\n# cluster: {cluster['hash']}" in guidance
    before = len(llm_server.requests)
    first_claim = next((workspace / "extractions").glob("*/claims/*.org"))
    first_claim.write_text(first_claim.read_text(encoding="utf-8").replace("#+filetags:", "#+filetags: :checked"),
                           encoding="utf-8")
    _extract(cli, llm_server, "e.md", "--use-extraction-feedback")
    assert [(e.field, e.action) for e in load_events(config.load(workspace, env={}))][3:] == [("tags", "edit")]
    (sent,) = _extractor_requests(llm_server.requests[before:])
    assert sent[0]["content"].endswith(f"For claim notes:\n- {BULLET}\n")
    before = len(llm_server.requests)
    _extract(cli, llm_server, "e.md")
    (plain,) = _extractor_requests(llm_server.requests[before:])
    assert BULLET not in plain[0]["content"]


def test_a_planned_run_hands_the_guidance_to_the_agent_playing_the_extractor(workspace, cli):
    schema = _golden_setup(workspace)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for flag, tail in (((), ""), (("--use-extraction-feedback",), "- Give each decision its reason.\n")):
        result = cli("extract", "b.md", "--schema", schema, "--plan", *flag, "--notes", "notes", "--json")
        assert result.exit_code == 0, result.stderr
        task = json.loads(result.stdout)["tasks"][0]
        assert task["context"]["persona"].startswith(golden[0]["content"])
        assert task["context"]["persona"].endswith(tail) and (tail or task["context"]["persona"] == golden[0]["content"])

"""`orgkit evolve`: clusters, the MIN_EVENTS gate, template bullets, the guardrail, user edits."""

from __future__ import annotations

import json
from pathlib import Path

from feedback_notes import edit, generate_claims

from orgkit import config
from orgkit.feedback.evolve import cluster_events
from orgkit.feedback.events import load_events
from orgkit.feedback.paths import guidance_path

NO_MODEL = {"ORGKIT_LLM_ENDPOINT": "", "ORGKIT_LLM_GGUF": "", "ORGKIT_LLM_GUIDANCE_ENDPOINT": "",
            "ORGKIT_LLM_GUIDANCE_GGUF": ""}


def _index(cli, notes: Path) -> dict:
    result = cli("index", "--notes", str(notes), "--no-embed", "--json", env=NO_MODEL)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _evolve(cli, notes: Path, env: dict | None = None) -> dict:
    result = cli("evolve", "--notes", str(notes), "--json", env={**NO_MODEL, **(env or {})})
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _correct(notes: Path, which: range) -> None:
    """The same correction on several claim notes: a vague quantity made exact."""
    for i in which:
        edit(notes / f"claims/claim-{i}.org", "in most cases.", f"in {i + 5} of 12 trials.")


def _corrected(tmp_path: Path, cli, claims: int, corrected: int):
    """Notes of `claims` generated claims whose first `corrected` are corrected, then indexed (events recorded)."""
    cfg = generate_claims(tmp_path / "notes", claims)
    _correct(cfg.notes, range(corrected))
    _index(cli, cfg.notes)
    return cfg


def test_min_events_gate(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 4, 2)
    data = _evolve(cli, cfg.notes)
    assert [(c["field"], c["events"], c["status"]) for c in data["clusters"]] == [("body", 2, "below_min")]
    assert not data["written"] and not guidance_path(cfg).exists()
    (cfg.notes / "orgkit.toml").write_text("[feedback]\nmin_events = 2\n", encoding="utf-8")
    assert [c["status"] for c in _evolve(cli, cfg.notes)["clusters"]] == ["new"]
    (cfg.notes / "orgkit.toml").unlink()
    guidance_path(cfg).unlink()
    _correct(cfg.notes, range(2, 3))
    assert _index(cli, cfg.notes)["feedback_events"] == 1
    data = _evolve(cli, cfg.notes)
    (cluster,) = data["clusters"]
    assert (cluster["extractor"], cluster["node_type"], cluster["field"], cluster["source"], cluster["events"],
            cluster["status"]) == ("extractor", "claim", "body", "override", 3, "new")


def test_no_model_writes_a_deterministic_template_bullet(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 3, 3)
    result = cli("evolve", "--notes", str(cfg.notes), "--json", env=NO_MODEL)
    assert "template bullets written" in result.stderr
    data = json.loads(result.stdout)
    (cluster,) = data["clusters"]
    assert cluster["by"] == "template" and data["model_calls"] == 0
    assert cluster["bullet"].startswith("People corrected the body of 3 generated claim notes from 3 documents (3 edited)")
    text = guidance_path(cfg).read_text(encoding="utf-8")
    assert (f"* Extractor: extractor\n** Node Type: claim\n# cluster: {cluster['hash']} source=override field=body "
            f"events=3\n- {cluster['bullet']}\n") in text
    again = _evolve(cli, cfg.notes)
    assert again["clusters"][0]["status"] == "unchanged" and not again["written"]
    assert guidance_path(cfg).read_text(encoding="utf-8") == text


def test_guardrail_drops_and_reports(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 3, 3)
    data = _evolve(cli, cfg.notes, env={"ORGKIT_FEEDBACK_GUARDRAIL": r"write\s+the\s+body"})
    (dropped,) = data["dropped"]
    assert dropped["status"] == "dropped" and dropped["pattern"] == r"write\s+the\s+body"
    assert not guidance_path(cfg).exists()
    human = cli("evolve", "--notes", str(cfg.notes), env={**NO_MODEL, "ORGKIT_FEEDBACK_GUARDRAIL": r"write\s+the\s+body"})
    assert "dropped by the guardrail" in human.stdout
    bad = cli("evolve", "--notes", str(cfg.notes), env={**NO_MODEL, "ORGKIT_FEEDBACK_GUARDRAIL": "(unclosed"})
    assert bad.exit_code == 1 and "feedback.guardrail: not a regular expression" in bad.stderr


def test_default_guardrail_lets_template_bullets_through_and_stops_saying_less():
    from orgkit.feedback.guardrail import offending, patterns

    compiled = patterns(config.load(Path(__file__).parent.parent / "notes", env={}))
    for bad in ("Extract fewer claims from each document.", "Skip the methods dimension.",
                "Drop or shorten quotes.", "Paraphrase the source instead of quoting it.", "Link less.",
                "Avoid quoting tables.", "Do not add links between claims."):
        assert offending(bad, compiled), bad
    for good in ("Quote the source verbatim; do not paraphrase.", "Give each claim its numbers.",
                 "Remove hedging from claims and keep the exact quote.",
                 "People deleted 3 generated quote notes from 3 documents, for example “x”."):
        assert offending(good, compiled) is None, good


def test_a_deleted_bullet_stays_deleted_until_its_cluster_changes(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 4, 3)
    _evolve(cli, cfg.notes)
    path = guidance_path(cfg)
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join(line for line in lines if not line.startswith("- ")), encoding="utf-8")
    deleted = path.read_text(encoding="utf-8")
    assert _evolve(cli, cfg.notes)["clusters"][0]["status"] == "deleted"
    assert path.read_text(encoding="utf-8") == deleted
    _correct(cfg.notes, range(3, 4))
    _index(cli, cfg.notes)
    data = _evolve(cli, cfg.notes)
    assert data["clusters"][0]["status"] == "updated" and data["clusters"][0]["events"] == 4
    assert "\n- People corrected the body of 4 generated claim notes" in path.read_text(encoding="utf-8")


def test_an_edited_bullet_is_kept_as_edited(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 4, 3)
    _evolve(cli, cfg.notes)
    path = guidance_path(cfg)
    text = path.read_text(encoding="utf-8")
    start = text.index("\n- ") + 1
    path.write_text(text[:start] + "- Give every effect as a count of trials,\n  never as \"most cases\".\n",
                    encoding="utf-8")
    assert _evolve(cli, cfg.notes)["clusters"][0]["status"] == "edited"
    _correct(cfg.notes, range(3, 4))
    _index(cli, cfg.notes)
    data = _evolve(cli, cfg.notes)
    assert data["clusters"][0]["status"] == "edited"
    assert data["clusters"][0]["bullet"] == 'Give every effect as a count of trials, never as "most cases".'
    final = path.read_text(encoding="utf-8")
    assert "events=4\n- Give every effect as a count of trials,\n  never as \"most cases\".\n" in final


def test_a_deleted_cluster_block_is_written_again(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 3, 3)
    first = _evolve(cli, cfg.notes)["clusters"][0]["bullet"]
    path = guidance_path(cfg)
    path.write_text("".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                            if not line.startswith(("- ", "# cluster:"))), encoding="utf-8")
    data = _evolve(cli, cfg.notes)
    assert data["clusters"][0]["status"] == "new" and data["clusters"][0]["bullet"] == first


def test_clusters_are_stable_when_notes_are_renamed(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 3, 3)
    before = _evolve(cli, cfg.notes)["clusters"]
    for i in range(3):
        (cfg.notes / f"claims/claim-{i}.org").rename(cfg.notes / f"renamed-{i}.org")
    _index(cli, cfg.notes)
    assert _evolve(cli, cfg.notes)["clusters"] == [{**c, "status": "unchanged"} for c in before]
    for i in range(3):
        edit(cfg.notes / f"renamed-{i}.org", f"#+title: Claim {i}", f"#+title: Effect {i} in trials")
    _index(cli, cfg.notes)
    after = {(c["field"], c["source"]): c for c in _evolve(cli, cfg.notes)["clusters"]}
    assert after[("body", "override")]["hash"] == before[0]["hash"]
    assert after[("title", "override")]["events"] == 3


def test_a_note_edited_twice_counts_once(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 1, 1)
    edit(cfg.notes / "claims/claim-0.org", "5 of 12", "6 of 12")
    _index(cli, cfg.notes)
    events = load_events(cfg)
    assert len(events) == 2
    (cluster,) = cluster_events(events)
    assert [e.after for e in cluster.members] == [events[1].after]


def _with_model(server) -> dict:
    return {**NO_MODEL, "ORGKIT_LLM_ENDPOINT": server.url, "ORGKIT_LLM_MODEL": "m"}


def test_model_bullet_is_cached_by_cluster_membership(tmp_path, cli, llm_server):
    cfg = _corrected(tmp_path, cli, 4, 3)
    llm_server.reply({"bullet": "Give each effect as a count of trials, as in “5 of 12 trials”."})
    data = _evolve(cli, cfg.notes, env=_with_model(llm_server))
    (cluster,) = data["clusters"]
    assert (cluster["status"], cluster["by"], data["model_calls"]) == ("new", "m", 1)
    assert "\n- Give each effect as a count of trials, as in “5 of 12 trials”.\n" in guidance_path(cfg).read_text(
        encoding="utf-8")
    (request,) = llm_server.requests
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert "one guidance" in system and "Field: body" in user and "in 7 of 12 trials" in user
    again = _evolve(cli, cfg.notes, env=_with_model(llm_server))
    assert again["model_calls"] == 0 and again["clusters"][0]["status"] == "unchanged"
    assert len(llm_server.requests) == 1  # the cache answered
    _correct(cfg.notes, range(3, 4))
    _index(cli, cfg.notes)
    llm_server.reply({"bullet": "State effects as counts of trials."})
    grown = _evolve(cli, cfg.notes, env=_with_model(llm_server))
    assert (grown["model_calls"], grown["clusters"][0]["status"]) == (1, "updated")
    assert len(llm_server.requests) == 2


def test_a_template_bullet_is_rephrased_once_a_model_is_configured(tmp_path, cli, llm_server):
    cfg = _corrected(tmp_path, cli, 3, 3)
    assert _evolve(cli, cfg.notes)["clusters"][0]["by"] == "template"
    llm_server.reply({"bullet": "Give effects as counts."})
    data = _evolve(cli, cfg.notes, env=_with_model(llm_server))
    assert (data["clusters"][0]["status"], data["clusters"][0]["bullet"]) == ("updated", "Give effects as counts.")


def test_a_model_bullet_that_teaches_saying_less_is_dropped(tmp_path, cli, llm_server):
    cfg = _corrected(tmp_path, cli, 3, 3)
    llm_server.reply({"bullet": "Extract fewer claims and shorten the quotes."})
    data = _evolve(cli, cfg.notes, env=_with_model(llm_server))
    (dropped,) = data["dropped"]
    assert dropped["bullet"] == "Extract fewer claims and shorten the quotes." and dropped["pattern"]
    assert not guidance_path(cfg).exists()
    again = _evolve(cli, cfg.notes, env=_with_model(llm_server))
    assert again["dropped"] and again["model_calls"] == 0 and len(llm_server.requests) == 1


def test_a_failing_model_falls_back_to_the_template(tmp_path, cli, llm_server):
    from llm_server import Canned

    cfg = _corrected(tmp_path, cli, 3, 3)
    llm_server.reply(Canned("overloaded", status=500))
    result = cli("evolve", "--notes", str(cfg.notes), "--json", env=_with_model(llm_server))
    assert result.exit_code == 0 and "guidance model failed" in result.stderr
    assert json.loads(result.stdout)["clusters"][0]["by"] == "template"


def test_template_examples_show_the_words_that_changed():
    from orgkit.feedback.evolve import changed_words

    assert changed_words("effect 1 in most cases. From X.", "effect 1 in 6 of 12 trials. From X.") == (
        "most cases.", "6 of 12 trials.")
    assert changed_words("a b c", "a b x c") == ("b", "b x")
    assert changed_words("same", "same") == ("same", "same")
    assert changed_words("old text", None) == ("old text", "")


def test_a_rewrapped_bullet_is_unchanged_and_left_as_written(tmp_path, cli):
    cfg = _corrected(tmp_path, cli, 3, 3)
    _evolve(cli, cfg.notes)
    path = guidance_path(cfg)
    wrapped = path.read_text(encoding="utf-8").replace(" generated claim notes", "\n  generated claim notes")
    path.write_text(wrapped, encoding="utf-8")
    data = _evolve(cli, cfg.notes)
    assert data["clusters"][0]["status"] == "unchanged" and not data["written"]
    assert path.read_text(encoding="utf-8") == wrapped


def test_without_a_model_a_cluster_with_nothing_concrete_gets_no_bullet(tmp_path, cli):
    from orgkit.feedback.events import record_review

    cfg = generate_claims(tmp_path / "notes", 1)
    for n in range(3):  # accepted as proposed: "X became X" is no example
        record_review(cfg, item_id=f"p{n}", action="accept", source_path=f"d{n}.md", canonical_node_id=f"n{n}",
                      before="Progressive Summarization", after="Progressive Summarization")
    data = _evolve(cli, cfg.notes)
    assert [(c["status"], c["bullet"]) for c in data["clusters"]] == [("vague", None)]
    assert not data["written"] and not guidance_path(cfg).exists()


def test_without_a_model_a_bullet_names_the_dimension_and_two_real_edits(tmp_path, cli, monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    sources = {"db.md": "the cache in SQLite", "queue.md": "the jobs in Redis", "log.md": "the logs in Loki"}
    for name, what in sources.items():
        (tmp_path / name).write_text(f"# {name}\n\n## Decision\n\nWe will keep {what} from now on.\n",
                                     encoding="utf-8")
        result = cli("extract", str(tmp_path / name), "--schema", "adr", "--notes", str(notes), "--json",
                     env=NO_MODEL)
        assert result.exit_code == 0, result.stderr
    for path in sorted(notes.glob("extractions/*/claims/*.org")):
        text = path.read_text(encoding="utf-8")
        for what in sources.values():
            text = text.replace(f"\nWe will keep {what} from now on.\n", f"\n{what.split()[-1]}.\n", 1)
        path.write_text(text, encoding="utf-8")
    _index(cli, notes)
    data = _evolve(cli, notes)
    bullets = [c["bullet"] for c in data["clusters"] if c["status"] == "new"]
    assert len(bullets) == 1, data["clusters"]
    assert "claim notes under decision from 3 documents" in bullets[0]
    assert "each edit made the text shorter" in bullets[0]
    assert bullets[0].count("” became “") == 2
    assert not any(was == now for was, now in
                   [pair.split("” became “") for pair in bullets[0].split("example “", 1)[1].split("” and “")])

"""The guidance file: lossless parse and render, slices by extractor and node type."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from orgkit import config
from orgkit.feedback.guidance import (ClusterRef, Entry, guidance_prompt, new_guidance, parse, prompt_section,
                                      render)

SAMPLE = """#+title: Extraction guidance
# a comment of the user's

* Extractor: extractor
Intro text under the extractor.
** Node Type: claim
# cluster: sha256:aa11 source=override field=body events=3
- State the measured effect with its numbers.
# cluster: sha256:bb22 source=override field=title events=4
- Titles are full sentences
  that name the finding.
- A bullet written by hand.

# cluster: sha256:cc33 source=link_change field=links events=5
** Node Type: quote
# cluster: sha256:dd44 source=review field=proposal events=3
- Quote whole sentences.
* Extractor: librarian
** Node Type: note
- Keep the deposit's wording.
"""


def test_render_parse_round_trip():
    doc = parse(SAMPLE)
    assert render(doc) == SAMPLE
    assert render(parse(render(doc))) == SAMPLE


def test_parse_reads_clusters_bullets_and_deletions():
    doc = parse(SAMPLE)
    claim = doc.section("extractor", "claim")
    entries = claim.entries()
    assert [e.cluster.hash if e.cluster else None for e in entries] == ["aa11", "bb22", None, "cc33"]
    assert entries[1].bullet == "Titles are full sentences that name the finding."
    assert entries[2].cluster is None and entries[2].bullet == "A bullet written by hand."
    assert entries[3].bullet is None  # deleted by the user, its cluster line kept
    assert doc.entry("extractor", "claim", "link_change", "links") is entries[3]
    assert entries[0].cluster == ClusterRef("aa11", "override", "body", 3)


def test_slicing_returns_only_the_matching_bullets():
    doc = parse(SAMPLE)
    assert doc.bullets("extractor", "claim") == [
        "State the measured effect with its numbers.", "Titles are full sentences that name the finding.",
        "A bullet written by hand."]
    assert doc.bullets("extractor", "quote") == ["Quote whole sentences."]
    assert doc.bullets("librarian", "note") == ["Keep the deposit's wording."]
    assert doc.bullets("librarian", "claim") == [] and doc.bullets("scribe", "claim") == []


def test_new_sections_render_in_the_documented_shape():
    doc = new_guidance()
    entry = Entry(None)
    entry.set_cluster(ClusterRef("ff00", "override", "body", 3))
    entry.set_bullet("Give numbers.")
    doc.new_section("extractor", "claim").items.append(entry)
    text = render(doc)
    assert text.endswith("* Extractor: extractor\n** Node Type: claim\n"
                         "# cluster: sha256:ff00 source=override field=body events=3\n- Give numbers.\n")
    assert render(parse(text)) == text


def test_prompt_section_carries_only_the_matching_slices(tmp_path):
    assert prompt_section({"claim": []}) == ""
    assert prompt_section({"claim": ["A.", "B."], "quote": []}).endswith("For claim notes:\n- A.\n- B.\n")
    notes = tmp_path / "notes"
    (notes / "orgkit-data").mkdir(parents=True)
    cfg = config.load(notes, env={})
    assert guidance_prompt(cfg, "extractor", ["claim"]) == ""  # no guidance file yet
    (notes / "orgkit-data" / "guidance.org").write_text(SAMPLE, encoding="utf-8")
    text = guidance_prompt(cfg, "extractor", ["claim", "quote", "hub"])
    assert "- State the measured effect with its numbers.\n" in text and "- Quote whole sentences.\n" in text
    assert "deposit" not in text and "hub notes" not in text
    assert guidance_prompt(cfg, "librarian", ["note"]).endswith("For note notes:\n- Keep the deposit's wording.\n")


_LINE = st.sampled_from([
    "* Extractor: extractor", "** Node Type: claim", "* Other", "*** Deep", "- a bullet", "  continued",
    "# cluster: sha256:ab source=override field=body events=3", "# comment", "", "text", "+ plus item",
    "** Node Type: quote", "\tindented"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE, max_size=25), st.booleans())
def test_any_text_round_trips(lines, final_newline):
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    assert render(parse(text)) == text


def test_guidance_command_shows_the_file_and_slices(tmp_path, cli):
    notes = tmp_path / "notes"
    (notes / "orgkit-data").mkdir(parents=True)
    (notes / "orgkit-data" / "guidance.org").write_text(SAMPLE, encoding="utf-8")
    result = cli("guidance", "--notes", str(notes), "--extractor", "extractor", "--node-type", "quote", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["file"] == "orgkit-data/guidance.org" and data["exists"]
    assert data["slices"] == [{"extractor": "extractor", "node_type": "quote", "bullets": ["Quote whole sentences."]}]
    assert config.load(notes, env={}).data_dir / "guidance.org" == notes / "orgkit-data" / "guidance.org"

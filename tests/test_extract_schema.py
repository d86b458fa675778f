"""Schemas as org notes: parsing, the overlay and templates, tag uniqueness, init."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orgkit.errors import OrgkitError
from orgkit.extract.schema import init_schema, list_schemas, parse_schema, resolve_schema

SCHEMA = """:PROPERTIES:
:ID:       11111111-2222-3333-4444-555555555555
:ORGKIT_SCHEMA: mini
:GROUNDED: t
:END:
#+title: A small schema

What it is for.

* claim
:PROPERTIES:
:TAG:      mini_claim
:HEADINGS: Claims, Findings
:END:
What the text claims.

* risk
:PROPERTIES:
:TAG:      mini_risk
:END:
What could go wrong.
"""


def test_a_schema_is_parsed_from_its_org_file(tmp_path: Path) -> None:
    schema = parse_schema(SCHEMA, tmp_path / "mini.org", "file")
    assert (schema.name, schema.title, schema.grounded, schema.description) == (
        "mini", "A small schema", True, "What it is for.")
    assert [(d.name, d.tag, d.rubric, d.headings) for d in schema.dimensions] == [
        ("claim", "mini_claim", "What the text claims.", ("Claims", "Findings")),
        ("risk", "mini_risk", "What could go wrong.", ())]
    assert not parse_schema(SCHEMA.replace(":GROUNDED: t", ":GROUNDED: nil"), tmp_path / "m.org", "file").grounded


@pytest.mark.parametrize("edit, message", [
    ((":ORGKIT_SCHEMA: mini\n", ""), "not a schema"),
    ((":TAG:      mini_risk\n", ""), "no :TAG:"),
    (("mini_risk", "mini_claim"), "used by two dimensions"),
    (("mini_risk", "bad tag"), "not an org tag"),
    ((":GROUNDED: t", ":GROUNDED: maybe"), ":GROUNDED:"),
])
def test_a_broken_schema_is_one_line_naming_file_and_line(tmp_path: Path, edit, message) -> None:
    with pytest.raises(OrgkitError) as err:
        parse_schema(SCHEMA.replace(*edit), tmp_path / "mini.org", "file")
    assert message in str(err.value) and "mini.org:" in str(err.value) and "\n" not in str(err.value)


def test_overlay_then_templates_then_files(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "schemas").mkdir(parents=True)
    (notes / "schemas" / "mini.org").write_text(SCHEMA, encoding="utf-8")
    names = [(s.name, s.origin) for s in list_schemas(notes)]
    assert names[0] == ("mini", "overlay") and ("adr", "template") in names and ("paper", "template") in names
    assert resolve_schema(notes, "adr").origin == "template"
    outside = tmp_path / "elsewhere.org"
    outside.write_text(SCHEMA.replace("mini_", "other_").replace(": mini", ": other"), encoding="utf-8")
    assert resolve_schema(notes, str(outside)).origin == "file"
    with pytest.raises(OrgkitError, match="unknown schema 'nope'"):
        resolve_schema(notes, "nope")


def test_a_tag_clash_names_both_schemas(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "schemas").mkdir(parents=True)
    (notes / "schemas" / "mini.org").write_text(SCHEMA, encoding="utf-8")
    clash = tmp_path / "clash.org"
    clash.write_text(SCHEMA.replace(":ORGKIT_SCHEMA: mini", ":ORGKIT_SCHEMA: clash")
                     .replace("11111111", "99999999"), encoding="utf-8")
    with pytest.raises(OrgkitError) as err:
        resolve_schema(notes, str(clash))
    assert "'mini_claim'" in str(err.value) and "'mini'" in str(err.value) and "'clash'" in str(err.value)


def test_init_copies_a_template_with_a_fresh_id_and_never_overwrites(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    schema = init_schema(notes, "adr")
    template = resolve_schema(tmp_path, "adr")
    assert schema.origin == "overlay" and schema.path == notes / "schemas" / "adr.org"
    assert schema.id != template.id and [d.tag for d in schema.dimensions] == [d.tag for d in template.dimensions]
    with pytest.raises(OrgkitError, match="already exists"):
        init_schema(notes, "adr")
    with pytest.raises(OrgkitError, match="unknown schema template"):
        init_schema(notes, "nope")


def test_the_adr_template_has_the_five_dimensions() -> None:
    schema = resolve_schema(Path("/nonexistent"), "adr")
    assert [d.name for d in schema.dimensions] == ["problem", "decision", "alternatives", "consequences", "status"]
    assert schema.grounded


def test_extraction_is_a_capability_with_roles_and_schemas(tmp_path: Path) -> None:
    from orgkit import config
    from orgkit.skills import load_registry

    notes = tmp_path / "notes"
    notes.mkdir()
    on = config.load(notes, env={"ORGKIT_EXTRACTION": "1"})
    cap = next(c for c in load_registry(notes, on).capabilities if c.name == "grounded-extraction")
    assert cap.enabled and {"extractor", "auditor"} <= set(cap.roles) and {"adr", "paper"} <= set(cap.schemas)
    off = config.load(notes, env={})
    assert not next(c for c in load_registry(notes, off).capabilities if c.name == "grounded-extraction").enabled
    (notes / "orgkit.toml").write_text("[extraction]\nenabled = true\n", encoding="utf-8")
    from_file = config.load(notes, env={})
    assert next(c for c in load_registry(notes, from_file).capabilities if c.name == "grounded-extraction").enabled


def test_a_dimension_without_headings_borrows_the_templates_vocabulary(tmp_path: Path) -> None:
    from orgkit.extract.schema import with_template_vocabulary

    bare = SCHEMA.replace(":HEADINGS: Claims, Findings\n", "").replace("* claim", "* problem")
    schema = with_template_vocabulary(parse_schema(bare, tmp_path / "bare.org", "file"))
    problem, risk = schema.dimensions
    assert "Context" in problem.headings and '"however"' in problem.rubric
    assert risk.headings == () and risk.rubric == "What could go wrong."
    own = with_template_vocabulary(parse_schema(SCHEMA.replace("* claim", "* problem"), tmp_path / "o.org", "file"))
    assert own.dimensions[0].headings == ("Claims", "Findings")


def test_schema_init_prints_for_a_reader_and_json_only_with_json(tmp_path: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    notes = tmp_path / "notes"
    notes.mkdir()
    shown = cli("schema", "init", "adr", "--notes", str(notes))
    assert shown.exit_code == 0 and shown.stdout.startswith(f"wrote {notes / 'schemas' / 'adr.org'}: schema adr")
    assert "dimensions: problem, decision" in shown.stdout and not shown.stdout.lstrip().startswith("{")
    (notes / "schemas" / "adr.org").unlink()
    data = json.loads(cli("schema", "init", "adr", "--notes", str(notes), "--json").stdout)
    assert data["name"] == "adr" and data["path"] == str(notes / "schemas" / "adr.org")

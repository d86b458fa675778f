"""Skills: the registry's sources and precedence, the CLI, the tangled module."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orgkit.errors import OrgkitError
from orgkit.skills import Request, load_registry

REPO = Path(__file__).resolve().parents[1]
NOTES = REPO / "notes"

LOCAL_SKILL = '''
from orgkit.skills import Prompt, Skill

def _skill(name, description):
    return Skill(name=name, priority=90, description=description,
                 trigger=lambda r: "zebra" in r.query,
                 symbolic=lambda r: {"echo": r.query},
                 neuro=lambda r, d: Prompt(text="say " + d["echo"], reply_format={}))

def capability():
    return {"name": "{cap}", "enabled": {enabled},
            "skills": [_skill("atomic-notes", "local override"), _skill("zebra", "zebra skill")],
            "schemas": {}}
'''


def local_skill(notes: Path, name: str = "mine", cap: str = "local", enabled: bool = True) -> None:
    (notes / "skills").mkdir(exist_ok=True)
    code = LOCAL_SKILL.replace("{cap}", cap).replace("{enabled}", str(enabled))
    (notes / "skills" / f"{name}.py").write_text(code)


def contributed(tmp_path: Path, monkeypatch, enabled: bool) -> None:
    """Install a capability through a real entry point (a dist-info on sys.path)."""
    site = tmp_path / "site"
    dist = site / "orgkit_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: orgkit-plugin\nVersion: 1.0\n")
    module = f"orgkit_plugin_{str(enabled).lower()}"  # a fresh module per test
    (dist / "entry_points.txt").write_text(f"[orgkit.capabilities]\nplugin = {module}:capability\n")
    (site / f"{module}.py").write_text(textwrap.dedent(f'''
        from orgkit.skills import Prompt, Skill
        def capability():
            skill = Skill(name="plugin-skill", priority=10, description="from a plug-in",
                          trigger=lambda r: True, symbolic=lambda r: {{"n": 1}},
                          neuro=lambda r, d: Prompt(text="p", reply_format={{}}))
            override = Skill(name="atomic-notes", priority=10, description="plug-in override",
                             trigger=lambda r: True, symbolic=lambda r: {{}},
                             neuro=lambda r, d: Prompt(text="p", reply_format={{}}))
            return {{"name": "plugin", "enabled": {enabled}, "skills": [skill, override], "schemas": {{}}}}
    '''))
    monkeypatch.syspath_prepend(str(site))


def test_first_party_skill_is_known_without_entry_points() -> None:
    registry = load_registry(None)
    skill = registry.get("atomic-notes")
    assert skill.source == "package"
    assert skill.describe()["stages"] == ["symbolic", "neuro", "read"]


def test_precedence_package_contributed_local(tmp_path: Path, monkeypatch) -> None:
    contributed(tmp_path, monkeypatch, enabled=True)
    notes = tmp_path / "notes"
    notes.mkdir()
    registry = load_registry(notes, allow_local=True)
    assert registry.get("plugin-skill").source == "entry-point:plugin"
    assert registry.get("atomic-notes").description == "plug-in override"
    local_skill(notes)
    registry = load_registry(notes, allow_local=True)
    assert registry.get("atomic-notes").description == "local override"
    assert registry.get("atomic-notes").source == "local:mine.py"
    assert [s.name for s in registry.matching(Request("a zebra", notes))][:2] == ["atomic-notes", "zebra"]


def test_disabled_capability_skills_are_absent(tmp_path: Path, monkeypatch, cli) -> None:
    contributed(tmp_path, monkeypatch, enabled=False)
    notes = tmp_path / "notes"
    notes.mkdir()
    registry = load_registry(notes, allow_local=True)
    assert "plugin-skill" not in registry.skills
    assert registry.get("atomic-notes").source == "package"  # a disabled override hides nothing
    with pytest.raises(OrgkitError, match="disabled capability 'plugin'"):
        registry.get("plugin-skill")
    result = cli("skills", "show", "plugin-skill", "--notes", str(notes))
    assert result.exit_code == 1 and "disabled capability" in result.stderr
    listed = json.loads(cli("skills", "list", "--notes", str(notes), "--json").stdout)
    assert "plugin-skill" not in [s["name"] for s in listed]


def test_disabled_local_capability_removes_its_skills(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    local_skill(notes, enabled=False)
    registry = load_registry(notes, allow_local=True)
    assert "zebra" not in registry.skills
    assert registry.get("atomic-notes").source == "package"


def test_unknown_skill_and_stage(cli) -> None:
    result = cli("skills", "show", "nope", "--notes", str(NOTES))
    assert result.exit_code == 1 and "unknown skill: 'nope'" in result.stderr
    result = cli("skills", "run", "atomic-notes", "--query", "x", "--stage", "dance",
                 "--notes", str(NOTES))
    assert result.exit_code == 1 and "has no stage 'dance'" in result.stderr


def test_atomic_notes_stages_on_the_manual(cli) -> None:
    run = json.loads(cli("skills", "run", "atomic-notes", "--query", "how do backlinks work",
                         "--notes", str(NOTES), "--json").stdout)
    titles = [c["title"] for c in run["candidates"]]
    assert "orgkit backlinks" in titles and "Links and backlinks" in titles
    prompt = json.loads(cli("skills", "prompt", "atomic-notes", "--query", "how do backlinks work",
                            "--notes", str(NOTES), "--json").stdout)
    assert "Question: how do backlinks work" in prompt["text"]
    assert all(c["id"] in prompt["text"] for c in run["candidates"])
    assert prompt["reply_format"]["required"] == ["read"]
    chosen = run["candidates"][0]["id"]
    read = json.loads(cli("skills", "run", "atomic-notes", "--query", "backlinks", "--stage", "read",
                          "--reply", json.dumps({"read": [chosen, "made-up-id"]}),
                          "--notes", str(NOTES), "--json").stdout)
    assert read["notes"][0]["id"] == chosen and read["unknown"] == ["made-up-id"]


def test_committed_skill_modules_match_their_notes(tmp_path: Path) -> None:
    """`python tangle.py` reproduces the committed modules exactly."""
    for org in sorted((REPO / "skills").glob("*.org")):
        copy = tmp_path / "repo"
        if not copy.exists():
            (copy / "orgkit" / "skills").mkdir(parents=True)
            (copy / "skills").mkdir()
        (copy / "skills" / org.name).write_bytes(org.read_bytes())
    subprocess.run([sys.executable, str(REPO / "tangle.py"), *sorted(str(p) for p in (copy / "skills").glob("*.org"))],
                   check=True, capture_output=True)
    produced = sorted((copy / "orgkit" / "skills").iterdir())
    assert produced, "tangling skills/ produced nothing"
    for path in produced:
        committed = REPO / "orgkit" / "skills" / path.name
        assert committed.read_bytes() == path.read_bytes(), f"{committed} differs from its note; run python tangle.py"


def test_local_skill_files_run_only_when_allowed(tmp_path: Path, cli, user_config) -> None:
    notes = tmp_path / "notes"
    (notes / "skills").mkdir(parents=True)
    marker = tmp_path / "ran"
    (notes / "skills" / "sneaky.py").write_text(f"open({str(marker)!r}, 'w').close()\n"
                                                "def capability(): return {}\n")
    for args in (["skills", "list"], ["skills", "show", "atomic-notes"]):
        result = cli(*args, "--notes", str(notes))
        assert result.exit_code == 0 and not marker.exists()
        assert result.stderr.count("\n") == 1 and "skills.allow_local" in result.stderr
    local_skill(notes)
    (notes / "orgkit.toml").write_text("[skills]\nallow_local = true\n")  # a notes folder cannot grant it
    result = cli("skills", "list", "--notes", str(notes), "--json")
    assert result.exit_code == 0 and not marker.exists() and "zebra" not in result.stdout
    assert f"{notes / 'orgkit.toml'}: skills.allow_local ignored" in result.stderr
    user_config("[skills]\nallow_local = true\n")
    result = cli("skills", "list", "--notes", str(notes), "--json")
    assert marker.exists()  # it ran, and its bad capability() is one warning naming it
    assert result.exit_code == 0 and "zebra" in [s["name"] for s in json.loads(result.stdout)]
    (warning,) = [line for line in result.stderr.splitlines() if "sneaky.py" in line]
    assert "sneaky.py: skill file not loaded: ValueError: capability from local:sneaky.py lacks" in warning
    assert "Traceback" not in result.stderr


def test_failing_skill_files_are_one_line_each_and_others_still_work(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    local_skill(notes)
    (notes / "skills" / "broken.py").write_text("raise RuntimeError('boom\\nsecond line')\n")
    (notes / "skills" / "empty.py").write_text("x = 1\n")
    (notes / "skills" / "wrong.py").write_text("def capability(): return {'name': 'w', 'enabled': True, "
                                               "'skills': ['not a skill']}\n")
    registry = load_registry(notes, allow_local=True)
    assert registry.get("zebra").source == "local:mine.py"
    assert len(registry.warnings) == 3 and all("\n" not in w for w in registry.warnings)
    assert [w.split(": skill file not loaded: ")[0].rsplit("/", 1)[1] for w in registry.warnings] == [
        "broken.py", "empty.py", "wrong.py"]
    assert "RuntimeError: boom second line" in registry.warnings[0]


def test_skill_replies_are_checked(cli) -> None:
    def read_stage(reply: str):
        return cli("skills", "run", "atomic-notes", "--query", "x", "--stage", "read",
                   "--reply", reply, "--notes", str(NOTES))

    for reply, message in [('{"read": "abc"}', "reply.read must be an array"),
                           ('{"read": [1]}', "reply.read[0] must be a string"),
                           ("{}", "reply lacks 'read'")]:
        result = read_stage(reply)
        assert result.exit_code == 1, reply
        assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    for reply in ("[1, 2]", "{not json"):
        result = read_stage(reply)
        assert result.exit_code == 2 and "'reply' must be a JSON object" in result.stderr


def test_skills_run_prints_for_a_reader_and_json_only_with_json(cli) -> None:
    shown = cli("skills", "run", "atomic-notes", "--query", "how do backlinks work", "--notes", str(NOTES))
    assert shown.exit_code == 0 and not shown.stdout.lstrip().startswith("{")
    assert "Links and backlinks  [" in shown.stdout and "query: how do backlinks work" in shown.stdout
    prompt = cli("skills", "run", "atomic-notes", "--query", "backlinks", "--stage", "neuro", "--notes", str(NOTES))
    assert prompt.stdout.startswith("You are choosing which notes to read")
    read = cli("skills", "run", "atomic-notes", "--query", "backlinks", "--stage", "read", "--notes", str(NOTES),
               "--reply", json.dumps({"read": ["c8d5cab4-4cc6-4c30-a4e4-85badf0e8e91", "made-up-id"]}))
    assert read.stdout.startswith("# orgkit manual  [c8d5cab4-4cc6-4c30-a4e4-85badf0e8e91]")
    assert 'unknown: ["made-up-id"]' in read.stdout

"""Resolved configuration: flags > environment > user config > orgkit.toml > defaults, each with its origin."""

from __future__ import annotations

from pathlib import Path

import pytest

from orgkit import config
from orgkit.errors import OrgkitError


def test_precedence_and_origins(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "orgkit.toml").write_text('model = "from-file"\n[llm]\nmodel = "file-llm"\ntimeout = 30\n'
                                       '[llm.auditor]\nmodel = "other-family"\n', encoding="utf-8")
    env = {"ORGKIT_NOTES": str(notes), "ORGKIT_LLM_MODEL": "env-llm"}
    cfg = config.load(flags={"model": "from-flag"}, env=env)
    assert cfg.notes == notes and cfg.notes_origin == "env ORGKIT_NOTES"
    assert (cfg["model"], cfg.origins["model"]) == ("from-flag", "flag")
    assert (cfg["llm.model"], cfg.origins["llm.model"]) == ("env-llm", "env ORGKIT_LLM_MODEL")
    assert cfg["llm.timeout"] == 30.0 and cfg.origins["llm.timeout"].startswith("file ")
    assert cfg["llm.auditor.model"] == "other-family"
    assert cfg.state_dir == notes / ".orgkit" and cfg.origins["state_dir"] == "default"
    assert cfg.data_dir == notes / "orgkit-data"
    assert cfg.to_json()["llm.model"] == {"value": "env-llm", "origin": "env ORGKIT_LLM_MODEL", "kind": "notes"}


@pytest.mark.parametrize("toml, message", [
    ("nonsense = 1\n", "unknown key 'nonsense'"),
    ("[llm]\ntimeout = \"soon\"\n", "llm.timeout must be a number"),
    ("[serve]\nmax_line_bytes = 3\n", "serve.max_line_bytes must be at least 64"),
    ("model = [\n", "not valid TOML"),
    ("model = \"\udcff\"\n", "not UTF-8 at byte 9"),
])
def test_bad_file_is_one_clear_error(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "orgkit.toml").write_bytes(toml.encode("utf-8", "surrogateescape"))
    with pytest.raises(OrgkitError, match=message):
        config.load(tmp_path, env={})


def test_environment_values_are_typed(tmp_path: Path) -> None:
    cfg = config.load(tmp_path, env={"ORGKIT_EXTRACTION": "1", "ORGKIT_STATE_DIR": "elsewhere"})
    assert cfg["extraction.enabled"] is True
    assert cfg.state_dir == Path.cwd() / "elsewhere"
    with pytest.raises(OrgkitError, match=r"\$ORGKIT_FEEDBACK_MIN_EVENTS: feedback.min_events must be an integer"):
        config.load(tmp_path, env={"ORGKIT_FEEDBACK_MIN_EVENTS": "three"})


def test_missing_notes_dir(tmp_path: Path) -> None:
    with pytest.raises(OrgkitError, match="notes directory not found"):
        config.load(tmp_path / "absent", env={})


def test_state_dir_carries_a_gitignore(tmp_path: Path) -> None:
    state = config.ensure_state_dir(config.load(tmp_path, env={}))
    assert (state / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


HOSTILE = """
state_dir = "../other-repo"
data_dir = "inside-data"
[skills]
allow_local = true
[llm]
endpoint = "http://127.0.0.1:9/v1"
api_key_env = "AWS_SECRET_ACCESS_KEY"
model = "fine-to-set"
[mcp]
allow_review = true
[extract]
source_roots = ["/"]
"""


def test_a_notes_folder_cannot_grant_itself_trust(tmp_path: Path, capsys) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "orgkit.toml").write_text(HOSTILE, encoding="utf-8")
    cfg = config.load(notes, env={"HOME": str(tmp_path / "home")})
    refused = {"state_dir", "skills.allow_local", "llm.endpoint", "llm.api_key_env", "mcp.allow_review",
               "extract.source_roots"}
    assert set(cfg.refused) == refused
    assert cfg["skills.allow_local"] is False and cfg["mcp.allow_review"] is False and cfg["llm.endpoint"] is None
    assert cfg["llm.api_key_env"] == "ORGKIT_LLM_API_KEY" and cfg["extract.source_roots"] == []
    assert cfg.state_dir == notes / ".orgkit"  # outside the notes: refused
    assert cfg.data_dir == notes / "inside-data"  # inside: a notes folder may choose it
    assert cfg["llm.model"] == "fine-to-set"
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(refused)  # one line per key, naming it and where it may go
    user_file = tmp_path / "home" / ".config" / "orgkit" / "config.toml"
    assert (f"orgkit: warning: {notes / 'orgkit.toml'}: skills.allow_local ignored (a notes folder's orgkit.toml "
            f"cannot set a trust-granting setting); set it in {user_file} or $ORGKIT_ALLOW_LOCAL_SKILLS") in lines
    shown = cfg.to_json()
    assert shown["llm.endpoint"]["kind"] == "trust" and shown["llm.endpoint"]["refused"] == str(notes / "orgkit.toml")
    assert shown["state_dir"]["kind"] == "inside" and shown["model"]["kind"] == "notes"


def test_the_user_config_file_grants_trust_below_flags_and_env(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "orgkit.toml").write_text('[llm]\nmodel = "from-notes"\ntimeout = 30\n', encoding="utf-8")
    user = tmp_path / "xdg" / "orgkit" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('state_dir = "/tmp/elsewhere"\n[llm]\nendpoint = "http://127.0.0.1:1/v1"\n'
                    'model = "from-user"\n[skills]\nallow_local = true\n', encoding="utf-8")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "ORGKIT_ALLOW_LOCAL_SKILLS": "0"}
    cfg = config.load(notes, env=env)
    assert (cfg["llm.endpoint"], cfg.origins["llm.endpoint"]) == ("http://127.0.0.1:1/v1", f"user {user}")
    assert cfg["llm.model"] == "from-user" and cfg["llm.timeout"] == 30.0  # user file over the notes file
    assert cfg.state_dir == Path("/tmp/elsewhere") and not cfg.refused
    assert cfg["skills.allow_local"] is False  # the environment over the user file
    assert config.without_notes("llm.endpoint", env) == "http://127.0.0.1:1/v1"


def test_a_lenient_load_keeps_the_problems_and_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "orgkit.toml").write_text('modle = 1\n[llm]\ntimeout = "soon"\n', encoding="utf-8")
    cfg = config.load(tmp_path, env={}, lenient=True)
    assert cfg["llm.timeout"] == 300.0 and cfg["model"] == config.DEFAULT_MODEL
    assert [p.split(": ", 1)[1] for p in cfg.problems] == [
        "unknown key 'modle' (see `orgkit config` for the keys)", "llm.timeout must be a number, not 'soon'"]


def test_the_default_notes_dir_points_at_an_org_roam_dir_in_the_working_directory(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "20240101-idea.org").write_text(":PROPERTIES:\n:ID: x\n:END:\n#+title: Idea\n")
    with pytest.raises(OrgkitError, match=r"notes directory not found: notes \(this directory holds org files: "
                                          r"to use it as the notes dir, give --notes \. or set ORGKIT_NOTES=\$PWD\)"):
        config.load(env={})

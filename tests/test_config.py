"""Resolved configuration: flags > environment > orgkit.toml > defaults, each with its origin."""

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
    assert cfg.to_json()["llm.model"] == {"value": "env-llm", "origin": "env ORGKIT_LLM_MODEL"}


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

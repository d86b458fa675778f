"""A notes folder made by someone else: its orgkit.toml may make limits stricter, never looser,
cannot admit agents' deposits unreviewed, and a tokens file that came with it lets no one in."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_notes
from orgkit import config
from orgkit.memory.admission import policy

NOTES = {"a.org": ":PROPERTIES:\n:ID: a1\n:END:\n#+title: Alpha\n"}
RECEIVED_TOML = """\
[http]
max_body_bytes = 100000000000
idle_timeout = 5.0
[serve]
call_timeout = 86400.0
[query]
max_chars = 100
[admission]
deposits = { agent = "auto" }
"""


def test_a_notes_folder_lowers_limits_and_never_raises_them(cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {**NOTES, "orgkit.toml": RECEIVED_TOML})
    result = cli("config", "--notes", str(notes), "--json")
    values = json.loads(result.stdout)
    assert values["http.max_body_bytes"]["value"] == 4 << 20 and values["http.max_body_bytes"]["refused"]
    assert values["serve.call_timeout"]["value"] == 60.0 and values["serve.call_timeout"]["kind"] == "bound"
    assert values["http.idle_timeout"]["value"] == 5.0 and values["query.max_chars"]["value"] == 100
    assert values["admission"]["value"] == {} and values["admission"]["refused"]
    lines = [line for line in result.stderr.splitlines() if "ignored" in line]
    assert len(lines) == 3, result.stderr
    raised = next(line for line in lines if "http.max_body_bytes" in line)
    assert "not raise it above 4194304" in raised and "ORGKIT_HTTP_MAX_BODY_BYTES" in raised
    assert any('agent = "auto"' in line and "config.toml" in line for line in lines)
    # A received folder's deposits wait for review; the user's own file may admit them.
    assert policy(config.load(notes, lenient=True), "deposits/x.org", "agent") == "review"


def test_the_user_config_may_raise_a_limit_and_admit_agents(tmp_path: Path, user_config) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    user_config('[http]\nmax_body_bytes = 100000000\n[admission]\ndeposits = { agent = "auto" }\n')
    loaded = config.load(notes)
    assert loaded["http.max_body_bytes"] == 100_000_000
    assert policy(loaded, "deposits/x.org", "agent") == "auto"


def test_with_postgresql_tokens_live_in_the_database(cli, pg_url: str, tmp_path: Path) -> None:
    """A machine without the notes makes, lists and revokes the team server's tokens in the database;
    a server anywhere else on that database checks them (revocations included)."""
    from orgkit.tokens import DatabaseTokenStore, store_for

    absent = tmp_path / "not-here"
    env = {"ORGKIT_DATABASE_URL": pg_url, "ORGKIT_NOTES": str(absent)}
    made = json.loads(cli("token", "add", "alice", "--role", "admin", "--json", env=env).stdout)
    assert not absent.exists() and not list(tmp_path.iterdir())
    elsewhere = write_notes(tmp_path / "notes", NOTES)
    store = store_for(config.load(elsewhere, env={"ORGKIT_DATABASE_URL": pg_url}), print)
    assert isinstance(store, DatabaseTokenStore) and store.verify(made["token"]).role == "admin"
    listed = json.loads(cli("token", "list", "--json", "--notes", str(elsewhere), env=env).stdout)
    assert [(t["name"], t["revoked"]) for t in listed] == [("alice", None)]
    assert cli("token", "revoke", "alice", "--json", env=env).exit_code == 0
    assert store.verify(made["token"]) is None
    again = cli("token", "add", "alice", "--json", env=env)
    assert again.exit_code == 0 and store.verify(json.loads(again.stdout)["token"]).role == "reader"

"""A database password never printed, in any form a libpq URL or connection string carries it,
by any command, error or surface; what describes the machine only for the user and admins."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from conftest import write_notes
from orgkit.roles import OWNER, STDIO
from orgkit.mcp import build_server
from orgkit.ops import OpContext
from orgkit.redact import redact

SECRET = "s3cret-Xq7"
NOTES = {"a.org": ":PROPERTIES:\n:ID: a1\n:END:\n#+title: Alpha\n\nSome text.\n"}
# Unreachable or malformed on purpose: libpq's own messages echo what it could not parse.
URLS = [
    f"postgresql://team:{SECRET}@127.0.0.1:1/notes",
    f"postgresql://team@127.0.0.1:1/notes?password={SECRET}",
    f"postgresql://team@127.0.0.1:1/notes?sslmode=disable&pass%77ord={SECRET}&bogus=1",
    f"postgresql://team@127.0.0.1:1/notes?sslpassword={SECRET}",
    f"postgresql://team:{SECRET}@[::1/notes",
    f"postgresql://team@h/notes?password={SECRET}%",
    f"postgresql://team:{SECRET}@127.0.0.1:notaport/notes",
    f"postgres://team:%27{SECRET}%20x@127.0.0.1:1/notes",
    f"postgresql://team@127.0.0.1:1/notes?password='{SECRET} x'&passfile=/p/{SECRET}",
]


def test_every_form_of_a_password_is_masked() -> None:
    shown = {
        f"postgresql://team:{SECRET}@db/n": "postgresql://team:***@db/n",
        f"postgresql://t@db/n?password={SECRET}&sslmode=require": "postgresql://t@db/n?password=***&sslmode=require",
        f"postgresql://t@db/n?pass%77ord={SECRET}": "postgresql://t@db/n?pass%77ord=***",
        f"host=db password='{SECRET} with spaces\\' quoted' dbname=n": "host=db password=*** dbname=n",
        f"host=db sslpassword = {SECRET} dbname=n": "host=db sslpassword = *** dbname=n",
        f"cannot connect to postgresql://t@db/n?password={SECRET}: refused": "cannot connect to "
                                                                            "postgresql://t@db/n?password=***: refused",
        f"dbname=postgresql://a:{SECRET}@h/x": "dbname=postgresql://a:***@h/x",
        "postgresql://t@db:5432/n?sslmode=require": "postgresql://t@db:5432/n?sslmode=require",
        f"https://bob:{SECRET}@llm.example/v1": "https://bob:***@llm.example/v1",
    }
    for text, expected in shown.items():
        assert redact(text) == expected
    # Every other form libpq accepts: either quote, escapes, percent-encoding anywhere, odd URLs,
    # and what leads to a password (its file, a service, a client key).
    for text in (f'host=db password="a b {SECRET}" dbname=n', f"host=db password='it\\'s {SECRET}\\\\' x=1",
                 f"postgresql://u:%27{SECRET}%20x@h/db", f"postgresql://u:{SECRET}%40x@h/db",
                 f"postgres://:{SECRET}@[::1]:5432/db", f"postgresql://u:{SECRET}@h1:5432,h2:5433/db",
                 f"postgresql://h/db?password=%27{SECRET}%20x%27", f"postgresql://h/db?%70assword={SECRET}",
                 f"postgresql://u@h/db?password='{SECRET} x'", f"postgresql://u:p '{SECRET}@h/db",
                 f"postgresql://h/db?passfile=/home/me/{SECRET}/.pgpass", f"postgresql://h/db?sslkey=/k/{SECRET}.key",
                 f"postgresql://h/db?service={SECRET}", f"host=db passfile=/x/{SECRET} sslkey='/x/{SECRET} k'",
                 f"host=db service={SECRET}", f"PASSWORD = '{SECRET}'"):
        assert SECRET not in redact(text), text
    # libpq echoes a bad value alone, with no key: the URL it came from names it.
    url = f"postgresql://t@db/n?password={SECRET}%25%"
    assert redact(f'invalid percent-encoded token: "{SECRET}%%"', url) == 'invalid percent-encoded token: "***"'


@pytest.mark.parametrize("url", URLS, ids=range(len(URLS)))
def test_no_command_prints_the_password(cli, tmp_path: Path, url: str, tiny_model: Path) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    env = {"ORGKIT_DATABASE_URL": url, "ORGKIT_STATE_DIR": str(tmp_path / "state")}
    for args in (("config",), ("db", "status"), ("doctor", "--json"), ("search", "text")):
        result = cli(*args, "--notes", str(notes), env=env)
        assert SECRET not in result.stdout + result.stderr, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def pg_secret_url(postgres_server) -> str:
    """A real database, reached through a URL that also carries a password in its query."""
    from conftest import new_database

    url = new_database(postgres_server)
    return f"{url}{'&' if '?' in url else '?'}password={SECRET}"


def test_a_working_database_with_a_password_in_its_query(cli, pg_secret_url: str, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    env = {"ORGKIT_DATABASE_URL": pg_secret_url, "ORGKIT_STATE_DIR": str(tmp_path / "state")}
    for args in (("index",), ("db", "status"), ("doctor",), ("config",), ("search", "text")):
        result = cli(*args, "--notes", str(notes), "--json", env=env)
        assert result.exit_code in (0, 1) and SECRET not in result.stdout + result.stderr, args
    status = json.loads(cli("db", "status", "--notes", str(notes), "--json", env=env).stdout)
    assert status["location"].endswith("password=***")


def _mcp_call(ctx: OpContext, name: str) -> dict:
    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            return await client.call_tool(name, {})

    result = anyio.run(main)
    return json.loads(result.content[0].text)


def test_an_agent_sees_no_paths_or_hosts(pg_secret_url: str, tmp_path: Path, monkeypatch) -> None:
    """Over MCP (an agent, not the user) doctor and config keep paths inside the notes relative,
    leave out the others, and mask the database host."""
    notes = write_notes(tmp_path / "notes", NOTES)
    monkeypatch.setenv("ORGKIT_DATABASE_URL", pg_secret_url)
    ctx = OpContext(notes, {"state_dir": tmp_path / "state"}, warm=True)
    for name in ("doctor", "config"):
        text = json.dumps(_mcp_call(ctx, name))
        assert SECRET not in text and str(tmp_path) not in text, text
    config = _mcp_call(ctx, "config")["result"]
    assert config["notes"]["value"] == "." and config["state_dir"]["value"] == "(hidden)"
    assert config["database.url"]["value"].startswith("postgresql://(hidden)/")


def test_the_team_server_shows_the_set_up_to_admins_only(pg_secret_url: str, tmp_path: Path, monkeypatch) -> None:
    """doctor and config need an admin on the team server, and no answer or error carries the password."""
    from starlette.testclient import TestClient

    from orgkit.http.app import build_app
    from orgkit.http.guard import Allowed
    from orgkit.tokens import store_for

    notes = write_notes(tmp_path / "notes", NOTES)
    monkeypatch.setenv("ORGKIT_DATABASE_URL", pg_secret_url)
    ctx = OpContext(notes, {"state_dir": tmp_path / "state"}, warm=True)
    tokens = store_for(ctx.config, print)
    made = {role: tokens.add(role, role) for role in ("reader", "admin")}
    app = build_app(ctx, tokens, Allowed(frozenset({"testserver"})), max_body=1 << 20,
                    warm_up=False)
    with TestClient(app) as http:
        def op(name: str, role: str, **args) -> tuple[int, str]:
            answer = http.post(f"/ops/{name}", json=args, headers={"Authorization": f"Bearer {made[role]}"})
            return answer.status_code, answer.text

        for name in ("doctor", "config"):
            status, text = op(name, "reader")
            assert status == 403 and f"{name} needs the admin role" in text
            status, text = op(name, "admin")
            assert status == 200 and SECRET not in text and "password=***" in text
        status, text = op("search", "reader", query="text")
        assert status == 200 and SECRET not in text


def test_an_error_names_no_database_host_to_an_agent(tmp_path: Path, monkeypatch) -> None:
    """A database that cannot be reached: the user reads where, an agent only that it failed."""
    from orgkit.ops import call

    notes = write_notes(tmp_path / "notes", NOTES)
    monkeypatch.setenv("ORGKIT_DATABASE_URL", f"postgresql://team@db-host.invalid:1/notes?password={SECRET}")
    ctx = OpContext(notes, {"state_dir": tmp_path / "state"}, warm=True)
    with pytest.raises(Exception) as refused:
        call(ctx, "search", {"query": "text"}, identity=STDIO)
    assert "db-host.invalid" not in str(refused.value) and "postgresql://(hidden)/notes" in str(refused.value)
    assert SECRET not in str(refused.value)
    ctx.surface = "cli"
    with pytest.raises(Exception) as told:
        call(ctx, "search", {"query": "text"}, identity=OWNER)
    assert "db-host.invalid" in str(told.value) and SECRET not in str(told.value)


def test_no_answer_of_the_team_server_carries_the_password(tmp_path: Path, monkeypatch, tiny_model: Path) -> None:
    """Every form, through POST /ops/NAME as an admin and as a reader: doctor's facts and findings,
    config, and the error of a search that cannot reach the database."""
    from starlette.testclient import TestClient

    from orgkit.http.app import build_app
    from orgkit.http.guard import Allowed
    from orgkit.tokens import TokenStore

    notes = write_notes(tmp_path / "notes", NOTES)
    tokens = TokenStore(tmp_path / "tokens")
    made = {role: tokens.add(role, role) for role in ("reader", "admin")}
    for url in (URLS[1], URLS[5]):  # the query, and a value libpq echoes alone as it fails to parse it
        monkeypatch.setenv("ORGKIT_DATABASE_URL", url)
        ctx = OpContext(notes, {"state_dir": tmp_path / "state"}, warm=True)
        app = build_app(ctx, tokens, Allowed(frozenset({"testserver"})), max_body=1 << 20,
                        warm_up=False)
        with TestClient(app) as http:
            for role, name, args in (("admin", "doctor", {}), ("admin", "config", {}), ("reader", "doctor", {}),
                                     ("reader", "search", {"query": "text"}), ("admin", "search", {"query": "x"})):
                answer = http.post(f"/ops/{name}", json=args, headers={"Authorization": f"Bearer {made[role]}"})
                assert SECRET not in answer.text, (url, role, name, answer.text)

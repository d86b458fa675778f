"""What a server's caller may have evaluated is bounded by construction, whatever its request or the notes hold.

Patterns run on a linear-time engine, so the worst one a reader can write
costs time linear in the notes and the server keeps answering everyone else.
Header Lisp reaches the machine (environment, home directory, files,
platform) only for the owner on the command line: for every server's caller
a header that would is refused naming the header, and no answer carries a
value it would have read. The cases come from the rule, not from a list of
known functions: anything not granted is refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client

from conftest import write_notes
from orgkit.cli import main
from orgkit.errors import OrgkitError
from orgkit.mcp import build_server
from orgkit.ops import OpContext
from orgkit.patterns import linear
from team_server import ORGKIT
from test_http import HttpServer

SECRET = "s3cret-Pa55word-7f1d"  # in the server's environment and in a file outside the notes
RUN = "a" * 20000
WORST = ["(a+)+$", "(a|aa)+$", "(a*)*b", "(.*a){20}", "(x+x+)+y", "(?:a?){30}a{30}",
         "|".join(f"w{i}" for i in range(400)), "[\\s\\S]{1000}b"]  # each within query.max_chars
TOO_MUCH = ["a{1000}{1000}", "(a{1000}){1000}", "((a{100}){100}){100}", "(\\pL{1000})", "(a)\\1", "(?=a)a",
            "(?<!b)a", "(?P<x>a)(?P=x)"]


def _block(header: str) -> str:
    return f"""
    * Block
    #+begin_src emacs-lisp {header}
    (message "hi")
    #+end_src
    """


HEADERS = {  # each names the machine some way; none of them is granted to a server's caller
    "getenv": ':tangle (getenv "ORGKIT_TEST_SECRET")',
    "concat": ':tangle (concat (getenv "ORGKIT_TEST_SECRET") ".el")',
    "format": ':tangle (format "%s.el" (getenv "ORGKIT_TEST_SECRET"))',
    "cond": ':tangle (cond ((getenv "ORGKIT_TEST_SECRET") "yes.el") (t "no.el"))',
    "home": ":tangle ~/stolen.el",
    "expand": ':tangle (expand-file-name "~/x.el")',
    "expand_dir": ':tangle (expand-file-name "x.el" "~")',
    "relative": ':tangle (file-relative-name "~/x.el")',
    "abbreviate": ':tangle (abbreviate-file-name "/tmp/x.el")',
    "emacs_dir": ':tangle (expand-file-name "init.el" user-emacs-directory)',
    "platform": ":tangle (if (eq system-type 'gnu/linux) \"linux.el\" \"other.el\")",
    "file": ':tangle (with-temp-buffer (insert-file-contents "SECRET_FILE") (buffer-string))',
    "shell": ':tangle (shell-command-to-string "printenv ORGKIT_TEST_SECRET")',
    "clock": ':tangle (format-time-string "%Y.el")',
    "environment": ":tangle (car process-environment)",
    "var": ':var x=(getenv "ORGKIT_TEST_SECRET") :tangle out.el',
    "var_home": ':var x=(expand-file-name "~") :tangle out.el',
    "user": ':tangle (concat user-login-name ".el")',
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path, dict]:
    """Notes with a long run of `a` in headlines and one file per hostile header; the server's env."""
    base = tmp_path_factory.mktemp("reader-bounds")
    secret_file = base / "outside" / "secret.txt"
    secret_file.parent.mkdir()
    secret_file.write_text(SECRET)
    home = base / "home-of-the-server-user"
    home.mkdir()
    files = {"slow.org": ":PROPERTIES:\n:ID: slow\n:END:\n#+title: Slow\n" + "".join(f"* {RUN}\n" for _ in range(20)),
             "plain.org": ":PROPERTIES:\n:ID: plain\n:END:\n#+title: Compost\n* Compost heap\n"}
    files |= {f"{name}.org": _block(header.replace("SECRET_FILE", str(secret_file))) for name, header in HEADERS.items()}
    files["property.org"] = '#+PROPERTY: header-args :tangle (getenv "ORGKIT_TEST_SECRET")\n' + _block("")
    files["property_lang.org"] = ('#+PROPERTY: header-args:emacs-lisp :var x=(getenv "ORGKIT_TEST_SECRET")\n'
                                  + _block(":tangle out.el"))
    files["signal.org"] = _block(':tangle (concat (file-name-base) 1)')  # Emacs signals, naming a value
    notes = write_notes(base / "notes", files)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORGKIT_")}
    env |= {"ORGKIT_TEST_SECRET": SECRET, "HOME": str(home), "XDG_DATA_HOME": str(base / "data")}
    return notes, home, env


def _clean(text: str, home: Path) -> None:
    """Nothing the machine holds is in `text`: not the secret, not the home directory."""
    assert SECRET not in text and home.name not in text, text


# -- patterns ------------------------------------------------------------------------------------

def test_a_pattern_re2_refuses_is_one_line_naming_why() -> None:
    for pattern in TOO_MUCH:
        with pytest.raises(OrgkitError) as refused:
            linear(pattern)
        assert "\n" not in str(refused.value) and "invalid regex" in str(refused.value), pattern
    assert linear("(a+)+$").search("a" * 100000 + "b") is None  # linear: no backtracking


def test_the_worst_patterns_cost_time_linear_in_the_notes_through_mcp(hostile) -> None:
    notes, home, env = hostile
    ctx = OpContext(notes, {"state_dir": notes.parent / "state-mcp"}, warm=True)
    ctx.base = ctx.root

    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            timings = []
            for pattern in WORST + TOO_MUCH:
                start = time.monotonic()
                result = await client.call_tool("scan", {"query": pattern, "regex": True})
                timings.append((time.monotonic() - start, pattern, result))
            return timings

    try:
        timings = anyio.run(main)
    finally:
        ctx.close()
    for took, pattern, result in timings:
        assert took < 5, (pattern, took)
        if pattern in TOO_MUCH:
            assert result.is_error and "invalid regex" in result.content[0].text
    assert max(t for t, _, _ in timings) < 5


def test_serve_answers_the_next_request_after_the_worst_pattern(hostile) -> None:
    notes, home, env = hostile
    lines = [json.dumps({"op": "scan", "query": p, "regex": True, "request": i}) for i, p in enumerate(WORST)]
    lines.append(json.dumps({"op": "scan", "query": "compost", "request": "after"}))
    start = time.monotonic()
    done = subprocess.run([ORGKIT, "serve", "--notes", str(notes), "--state-dir", str(notes.parent / "state-serve")],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, env=env, timeout=120)
    took = time.monotonic() - start
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("request") for a in answers] == [*range(len(WORST)), "after"]
    assert answers[-1]["result"][0]["id"] == "plain"
    assert took < 30, took  # the whole session, start-up included; each pattern costs well under a second


@pytest.fixture(scope="module")
def served(hostile, tiny_model_dir):
    from tiny_model import MODEL_NAME

    notes, home, env = hostile
    env = env | {"ORGKIT_MODEL": MODEL_NAME, "ORGKIT_MODEL_PATH": str(tiny_model_dir)}
    made = CliRunner().invoke(main, ["token", "add", "reader-1", "--role", "reader", "--notes", str(notes),
                                     "--json"], env=env)
    server = HttpServer(notes, env)
    yield server, json.loads(made.stdout)["token"]
    server.close()


def test_the_team_server_answers_a_second_reader_within_a_second_while_a_first_sends_the_worst(served) -> None:
    server, token = served
    stop = threading.Event()
    first: list[httpx.Response] = []

    def hammer() -> None:
        for pattern in WORST:  # bounded: each worst pattern once
            if stop.is_set():
                return
            first.append(server.op("scan", token, query=pattern, regex=True))

    thread = threading.Thread(target=hammer)
    thread.start()
    try:
        time.sleep(0.3)
        waits = []
        while thread.is_alive() and len(waits) < 200:
            start = time.monotonic()
            answer = server.op("scan", token, query="compost")
            waits.append(time.monotonic() - start)
            assert answer.status_code == 200 and answer.json()["result"][0]["id"] == "plain"
    finally:
        stop.set()
        thread.join(timeout=120)
    assert waits and max(waits) < 1.0, waits
    assert [r.status_code for r in first] == [200] * len(WORST), [r.text for r in first]
    refused = server.op("scan", token, query="(a)\\1", regex=True)
    assert refused.status_code == 422  # the one table: a failed call
    assert "invalid regex" in refused.json()["error"] and "\n" not in refused.json()["error"]


def test_a_pattern_a_received_folder_sets_runs_in_linear_time_too() -> None:
    from orgkit.feedback.guardrail import offending, patterns

    compiled = patterns({"feedback.guardrail": ["(a+)+$", "(x+x+)+y"]})  # the notes' orgkit.toml may set it
    start = time.monotonic()
    assert offending("a" * 100000 + "b", compiled) is None and offending("x" * 50000, compiled) is None
    assert time.monotonic() - start < 1
    with pytest.raises(OrgkitError, match="feedback.guardrail: not a regular expression.*backreferences"):
        patterns({"feedback.guardrail": ["(a)\\1"]})


# -- header Lisp ---------------------------------------------------------------------------------

def _names_the_header(text: str, name: str) -> None:
    header = ":var" if name.startswith(("var", "property_lang")) else ":tangle"
    assert header in text, (name, text)


def test_no_header_reaches_the_machine_for_a_reader_of_the_team_server(served, hostile) -> None:
    server, token = served
    notes, home, env = hostile
    for name in [*HEADERS, "property", "property_lang", "signal"]:
        answer = server.op("tangle_plan", token, files=[f"{name}.org"])
        text = answer.text
        _clean(text, home)
        assert answer.status_code == 422, (name, text)
        _names_the_header(answer.json()["error"], name)
    signal = server.op("tangle_plan", token, files=["signal.org"]).json()["error"]
    assert signal.endswith("Emacs signals an error evaluating it")  # its own words could carry a value


def test_no_header_reaches_the_machine_over_stdio_mcp_or_serve(hostile, monkeypatch) -> None:
    notes, home, env = hostile
    for key in ("ORGKIT_TEST_SECRET", "HOME"):
        monkeypatch.setenv(key, env[key])
    ctx = OpContext(notes, {"state_dir": notes.parent / "state-mcp"}, warm=True)
    ctx.base = ctx.root
    names = [*HEADERS, "property", "property_lang", "signal"]

    async def main():
        async with Client(build_server(ctx, warm_up=False)) as client:
            return [await client.call_tool("tangle_plan", {"files": [f"{n}.org"]}) for n in names]

    try:
        results = anyio.run(main)
    finally:
        ctx.close()
    for name, result in zip(names, results):
        text = result.content[0].text
        assert result.is_error, (name, text)
        _clean(text, home)
        _names_the_header(text, name)
    requests = [{"op": op, "files": [f"{n}.org"]} for op in ("tangle_plan", "tangle") for n in names]
    lines = "\n".join(json.dumps(r) for r in requests) + "\n"
    before = sorted(p.name for p in notes.parent.rglob("*"))
    done = subprocess.run([ORGKIT, "serve", "--notes", str(notes), "--state-dir", str(notes.parent / "state-serve")],
                          input=lines, capture_output=True, text=True, env=env, timeout=120)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == 2 * len(names)  # tangle_plan, then tangle (stdio has every role)
    for name, answer in zip(names * 2, answers):
        assert "error" in answer, (name, answer)
        _clean(json.dumps(answer), home)
        _names_the_header(answer["error"], name)
    after = sorted(p.name for p in notes.parent.rglob("*") if not p.is_relative_to(notes.parent / "state-serve"))
    assert [n for n in after if n not in before] == []  # nothing tangled, here or in the home directory


def test_the_owner_on_the_command_line_gets_what_emacs_gives_its_user(hostile, tmp_path: Path) -> None:
    notes, home, env = hostile
    runner = CliRunner()

    def plan(name: str) -> dict:
        done = runner.invoke(main, ["tangle", str(notes / f"{name}.org"), "--dry-run", "--json"], env=env)
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)

    assert plan("concat")["targets"][0]["target"].endswith(f"{SECRET}.el")
    assert plan("property")["targets"][0]["target"].endswith(SECRET)
    assert plan("home")["targets"][0]["target"] == f"{home}/stolen.el"
    assert plan("platform")["targets"][0]["target"].endswith(("linux.el", "other.el"))
    refused = runner.invoke(main, ["tangle", str(notes / "shell.org"), "--dry-run"], env=env)
    assert refused.exit_code != 0 and "orgkit never runs code" in refused.output  # nobody gets a process

"""Shared fixtures: small real notes directories, the shared corpora, the CLI."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# The user's own config file ($XDG_CONFIG_HOME/orgkit/config.toml) must not reach the tests
# (subprocesses included), nor may a test write the user's tokens or state, or read those an
# earlier run left under the same notes path: the session gets empty homes of its own, which a
# module's server copies with the environment (each test gets its own below).
for _variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
    os.environ[_variable] = tempfile.mkdtemp(prefix=f"orgkit-{_variable.lower()}-")
    atexit.register(shutil.rmtree, os.environ[_variable], ignore_errors=True)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than there are cores. Many tests wait on what they start (servers,
    Emacs, a browser, processes they kill), so a worker per core leaves the cores idle a part of the run
    (bench/README.md, "Test suite time: one worker more than cores")."""
    return (os.cpu_count() or 1) + 1


def shared_path(*parts: str) -> Path:
    """A path in ../shared, skipping the test when it is absent (a user's clone)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared corpora are not part of a clone)")
    return path


# The real embedding model as the environment names it when the session starts (fixtures
# such as `tiny_model` change ORGKIT_MODEL_PATH later), so a fresh clone runs the real-model
# tests wherever ORGKIT_MODEL_PATH names a model, not only beside ../shared.
_MODEL_ENV = (os.environ.get("ORGKIT_MODEL", ""), os.environ.get("ORGKIT_MODEL_PATH", ""))
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def real_model() -> tuple[str, Path]:
    """The real embedding model's name and local directory: $ORGKIT_MODEL_PATH (named by
    $ORGKIT_MODEL, default MiniLM) when it is a directory, else ../shared's MiniLM; the test
    is skipped when there is neither."""
    name, path = _MODEL_ENV
    if path and Path(path).expanduser().is_dir():
        return name or MINILM, Path(path).expanduser()
    shared = SHARED / "models" / "all-MiniLM-L6-v2-int8"
    if not shared.is_dir():
        pytest.skip("no real embedding model: set ORGKIT_MODEL_PATH (and ORGKIT_MODEL) to a local copy")
    return MINILM, shared


@pytest.fixture(autouse=True)
def user_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private $XDG_STATE_HOME for every test (tangle keeps its records there), so no test
    writes into the user's own state dir or sees another test's records."""
    home = tmp_path_factory.mktemp("xdg-state")
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def user_data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private $XDG_DATA_HOME for every test (the team server's tokens live there)."""
    home = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def user_cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An $XDG_CACHE_HOME of the test session (the optimised models live there, shared as on a
    user's machine), so no test writes into the user's own cache."""
    home = tmp_path_factory.getbasetemp() / "xdg-cache"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture
def extraction_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's temp dir as the working directory of an extraction run: extraction on, and
    no model endpoint, GGUF, notes or data dir or embedding model inherited from the caller's
    environment, so the offline extractor and the paths the test gives are what run."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORGKIT_EXTRACTION", "1")
    for key in ("ORGKIT_LLM_ENDPOINT", "ORGKIT_LLM_GGUF", "ORGKIT_NOTES", "ORGKIT_DATA_DIR", "ORGKIT_MODEL_PATH"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path


@pytest.fixture
def braindump(tmp_path: Path) -> Path:
    """A private copy of the braindump corpus, safe to write into."""
    dest = tmp_path / "braindump"
    shutil.copytree(shared_path("corpora", "braindump"), dest)
    return dest


def write_notes(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path -> dedented org text) under `root`."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch):
    """Write the user's own config file (trust-granting settings go there): `user_config(toml_text)`."""
    home = tmp_path / "config-home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))

    def write(text: str) -> Path:
        path = home / "orgkit" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def cli():
    """Run `orgkit ARGS...` in-process; returns click's Result (stdout/stderr apart)."""
    from orgkit.cli import main

    runner = CliRunner()

    def run(*args: str, input: str | None = None, env: dict | None = None):
        return runner.invoke(main, list(args), input=input, env=env, catch_exceptions=False)

    return run


def cli_as_process(env: dict, *args: str):
    """Run `orgkit ARGS...` in this process with `env` as its whole environment, as a subprocess
    given `env` would have it; returns click's Result (stdout/stderr apart). For the setup steps
    and checks of tests about something else (a server, a browser, a killed process), which need
    the command's answer, not a Python started anew for it."""
    from orgkit.cli import main

    whole = {key: None for key in os.environ if key not in env} | env
    return CliRunner().invoke(main, list(args), env=whole, catch_exceptions=False)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A tiny static embedding model, built once per test session."""
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture
def tiny_model(tiny_model_dir: Path, monkeypatch) -> Path:
    """Make orgkit embed with the tiny model (through fastembed's real loading code)."""
    from tiny_model import MODEL_NAME

    monkeypatch.setenv("ORGKIT_MODEL", MODEL_NAME)
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(tiny_model_dir))
    monkeypatch.delenv("ORGKIT_STATE_DIR", raising=False)
    return tiny_model_dir


@pytest.fixture
def offline_env(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The environment for an `orgkit` subprocess: the tiny model, no ambient model endpoint."""
    for key in list(os.environ):
        if key.startswith("ORGKIT_LLM"):
            monkeypatch.delenv(key)
    return dict(os.environ)


@pytest.fixture
def llm_server():
    """A real OpenAI-compatible chat server on loopback with canned replies (tests/llm_server.py)."""
    from llm_server import LLMServer

    server = LLMServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL 16 with pgvector (the `pgserver` wheel) for the whole session.

    Started in a temporary directory under the system's temp dir (as root,
    pgserver runs it as a user of its own, who must be able to reach it) and
    thrown away when the session ends; the tests that need it skip with the
    reason when it cannot start.
    """
    import os
    import tempfile
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: no XDG_RUNTIME_DIR on a CI machine
        try:
            import pgserver
            import psycopg  # noqa: F401 - the driver orgkit uses
        except ImportError as exc:
            pytest.skip(f"PostgreSQL tests need pgserver and psycopg (pip install -e '.[test]'): {exc}")
        try:
            # In memory where the system has it: removing a data dir file by file costs seconds on disk.
            base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
            server = pgserver.get_server(tempfile.mkdtemp(prefix="orgkit-pg-", dir=base), cleanup_mode="delete")
        except Exception as exc:  # noqa: BLE001 - any failure to start is a reason to skip
            pytest.skip(f"cannot start a PostgreSQL server with pgserver: {exc}")
    yield server
    _remove_server(server)


def _remove_server(server, attempts: int = 4) -> None:
    """Stop the session's server and delete its data dir. The removal has met a file written while
    the dir was being emptied ("Directory not empty: 'base'"), the server's last writes landing after
    `pg_ctl stop` returned: it is tried again, a moment later, before the error stands."""
    import os
    import time

    for attempt in range(attempts):
        try:
            server.cleanup()
            return
        except OSError:
            if not os.path.exists(server.pgdata):
                return
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)


_databases = iter(range(1, 1 << 30))


def new_database(server) -> str:
    """A fresh, empty database on `server`, as a `postgresql://` URL."""
    import psycopg

    name = f"orgkit_test_{next(_databases)}"
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.get_uri(name)


@pytest.fixture
def pg_url(postgres_server) -> str:
    """A fresh, empty database on the session's server for one test."""
    return new_database(postgres_server)

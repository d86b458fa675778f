"""`orgkit --help`, `orgkit COMMAND --help` and shell completion run no capability factory and
import no model, index or retrieval code: they answer at once."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from orgkit.config import load
from orgkit.skills.registry import FIRST_PARTY, _capability, _load_target, first_party_enabled

HEAVY = ("numpy", "fastembed", "onnxruntime", "tokenizers", "httpx", "jsonschema", "mcp", "sqlite3",
         "orgkit.embed", "orgkit.llm", "orgkit.index", "orgkit.retrieve", "orgkit.tangle.plan",
         "orgkit.skills.atomic_notes", "orgkit.extract.schema", "importlib.metadata")

PROBE = """
import json, os, sys
from orgkit.cli import main
try:
    main(sys.argv[1:], prog_name="orgkit")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.__stderr__)
"""


@pytest.mark.parametrize("args, env", [
    (["--help"], {}),
    (["search", "--help"], {}),
    (["schema", "init", "--help"], {"ORGKIT_EXTRACTION": "1"}),
    ([], {"_ORGKIT_COMPLETE": "bash_complete", "COMP_WORDS": "orgkit s", "COMP_CWORD": "1"}),
], ids=["help", "command-help", "group-command-help", "completion"])
def test_help_and_completion_import_nothing_heavy(args: list[str], env: dict, tmp_path) -> None:
    import os

    run = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, **env})
    assert run.stdout.strip(), run.stderr  # it did answer
    modules = json.loads(run.stderr.strip().splitlines()[-1])
    loaded = [name for name in modules if any(name == h or name.startswith(h + ".") for h in HEAVY)]
    assert loaded == []


@pytest.mark.parametrize("on", [False, True])
def test_each_capability_switch_agrees_with_its_factory(on: bool, tmp_path, monkeypatch) -> None:
    (tmp_path / "orgkit.toml").write_text(f"extraction.enabled = {str(on).lower()}\n")
    monkeypatch.delenv("ORGKIT_EXTRACTION", raising=False)
    config = load(tmp_path, env={})
    for target in FIRST_PARTY:
        capability = _capability(_load_target(target), "package", config)
        assert first_party_enabled(capability.name, config) == capability.enabled, capability.name

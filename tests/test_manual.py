"""The manual in notes/ documents every command and passes orgkit's own checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orgkit.cli import main
from orgkit.vault import Vault

NOTES = Path(__file__).resolve().parents[1] / "notes"


@pytest.fixture(scope="module")
def manual() -> Vault:
    return Vault.load(NOTES)


def test_every_command_is_documented(manual: Vault) -> None:
    text = "\n".join((NOTES / f.path).read_text(encoding="utf-8") for f in manual.files)
    missing = [name for name in main.list_commands(None) if not re.search(rf"\borgkit {name}\b", text)]
    assert not missing, f"commands without a note in notes/: {missing}"


def test_manual_is_a_clean_graph(manual: Vault) -> None:
    assert 20 <= len(manual.files) <= 90
    assert not manual.warnings, manual.warnings
    ids = set(manual.by_id)
    broken = [(l.file, l.line, l.dest) for l in manual.links if l.type == "id" and l.dest not in ids]
    assert not broken, f"id links to missing notes: {broken}"
    linked = {l.dest for l in manual.links if l.type == "id"}
    orphans = [n.file for n in manual.nodes if n.level == 0 and n.id not in linked]
    assert len(orphans) <= 1, f"notes nothing links to: {orphans}"


# A path the manual names in the user's own directories: $XDG_..._HOME/orgkit/REST or ~/DEFAULT/orgkit/REST.
USER_PATH = re.compile(r"(\$XDG_[A-Z]+_HOME|~/\.[\w./]+?)/orgkit/([\w./*-]*)")
NOTES_PATH = re.compile(r"NOTES/([\w.-]+)/")


def _literal(rest: str) -> str:
    """The part of a path the manual names before its first placeholder (NAME-HASH.json, DIGEST/)."""
    parts = []
    for part in rest.strip("/").split("/"):
        if not part or re.search(r"[A-Z]{3}|\*", part):
            break
        parts.append(part)
    return "/".join(parts)


def test_every_path_the_manual_names_is_where_the_code_puts_it(tmp_path: Path, monkeypatch) -> None:
    """State dir, data dir, config file, tokens, tangle's records and the model cache, as the
    manual names them, against what orgkit.config (and the code that builds on it) resolves."""
    from orgkit import config
    from orgkit.embed import Embedder
    from orgkit.tangle.journal import records_dir
    from orgkit.tokens import tokens_dir

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for variable, _ in config.USER_DIRS.values():
        monkeypatch.delenv(variable, raising=False)
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / config.CONFIG_FILE).write_text("")
    loaded = config.load(notes, env={"HOME": str(home)})
    directory, name = records_dir(notes / "sub" / "x.org")
    put = {  # where the code puts each kind of thing, under the user's directory of that kind
        "config": [config.user_config_file({"HOME": str(home)})],
        "data": [tokens_dir(notes)],
        "state": [directory / name],
        "cache": [Embedder("m", None, None, config.model_cache()).model_cache / "DIGEST"],
    }
    variables = {variable: kind for kind, (variable, _) in config.USER_DIRS.items()}
    defaults = {f"~/{default}": kind for kind, (_, default) in config.USER_DIRS.items()}
    named: dict[str, list[str]] = {kind: [] for kind in put}
    notes_dirs: set[str] = set()
    for file in sorted(NOTES.glob("*.org")):
        text = file.read_text(encoding="utf-8")
        notes_dirs |= set(NOTES_PATH.findall(text))
        for base, rest in USER_PATH.findall(text):
            kind = variables.get(base[1:]) if base.startswith("$") else defaults.get(base)
            assert kind is not None, f"{file.name}: {base}/orgkit/ is none of the user's directories orgkit uses"
            root = config.user_dir(kind)
            literal = _literal(rest)
            assert any(p.relative_to(root).as_posix().startswith(literal) for p in put[kind]), \
                f"{file.name}: {base}/orgkit/{rest} is not where orgkit puts its {kind} files: {put[kind]}"
            named[kind].append(rest)
    assert all(named.values()), f"the manual names none of these user directories: {named}"
    assert put["data"][0].relative_to(config.user_dir("data")).parts[0] == "tokens"
    state, data = (loaded.state_dir.relative_to(notes).as_posix(), loaded.data_dir.relative_to(notes).as_posix())
    assert {state, data} <= notes_dirs, f"the manual names the state dir and data dir as NOTES/{state}/, NOTES/{data}/"
    assert {d for d in notes_dirs if d.startswith(".") or d.startswith("orgkit")} == {state, data}

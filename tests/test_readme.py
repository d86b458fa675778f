"""The README and the manual stay true: every setting in the manual's table, every module in
the README's map, the README short.

Run as a script, this prints the settings table as the manual's configuration note should hold it.
"""

from __future__ import annotations

from pathlib import Path

from orgkit.config import SETTINGS, STATE_DIR_NAME, Setting

README = Path(__file__).resolve().parents[1] / "README.md"
ORGKIT = README.parent / "orgkit"
# The manual's note that holds the settings table.
SETTINGS_NOTE = README.parent / "notes" / "20261204190400-configuration.org"


def _default(setting: Setting) -> str:
    if setting.derive is not None:
        return f"=NOTES/{setting.derive(Path('NOTES')).name}=" if setting.key != "state_dir" \
            else f"=NOTES/{STATE_DIR_NAME}="
    if setting.default is None:
        return "none"
    value = str(setting.default).lower() if isinstance(setting.default, bool) else setting.default
    return f"={value}="


def _cell(text: str) -> str:
    """Text as an org table cell: a bar would end the cell, backquotes are markdown."""
    return text.replace("|", "\\vert{}").replace("`", "=")


def settings_table() -> str:
    """The manual's table of settings (an org table), made from SETTINGS."""
    rows = ["| key | kind | type | environment | default | what it is |", "|---+---+---+---+---+---|"]
    for s in SETTINGS.values():
        env = f"={s.env}=" if s.env else ""
        kind = s.type_name().split(" ", 1)[1]
        rows.append(f"| ={s.key}= | {s.kind} | {kind} | {env} | {_cell(_default(s))} | {_cell(s.help)} |")
    return "\n".join(rows)


def test_the_manual_lists_every_setting() -> None:
    text = SETTINGS_NOTE.read_text(encoding="utf-8")
    assert settings_table() in text, f"{SETTINGS_NOTE.name}'s settings table is stale: run `python tests/test_readme.py`"


def test_the_readme_stays_short() -> None:
    """The README is the front door (what orgkit is, install, the first steps); the manual
    in notes/ holds the rest."""
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 260, f"README.md has {lines} lines: move details into the manual (notes/)"


def test_the_project_map_names_every_module() -> None:
    text = README.read_text(encoding="utf-8")
    mapped = text[text.index("## Project map"):]
    for entry in sorted(ORGKIT.iterdir()):
        if entry.name.startswith(("_", ".")) or entry.suffix not in ("", ".py"):
            continue
        name = f"orgkit/{entry.name}{'/' if entry.is_dir() else ''}"
        assert name in mapped, f"{name} is missing from the README's project map"


if __name__ == "__main__":
    print(settings_table())

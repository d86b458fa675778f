"""The README stays true: every setting in its table, every module in its map.

Run as a script, this prints the settings table as the README should hold it.
"""

from __future__ import annotations

from pathlib import Path

from orgkit.config import SETTINGS, STATE_DIR_NAME, Setting

README = Path(__file__).resolve().parents[1] / "README.md"
ORGKIT = README.parent / "orgkit"


def _default(setting: Setting) -> str:
    if setting.derive is not None:
        return f"`NOTES/{setting.derive(Path('NOTES')).name}`" if setting.key != "state_dir" \
            else f"`NOTES/{STATE_DIR_NAME}`"
    if setting.default is None:
        return "none"
    value = str(setting.default).lower() if isinstance(setting.default, bool) else setting.default
    return f"`{value}`"


def settings_table() -> str:
    """The README's table of settings, made from SETTINGS."""
    rows = ["| key | kind | type | environment | default | what it is |", "| --- | --- | --- | --- | --- | --- |"]
    for s in SETTINGS.values():
        env = f"`{s.env}`" if s.env else ""
        kind = s.type_name().split(" ", 1)[1]
        rows.append(f"| `{s.key}` | {s.kind} | {kind} | {env} | {_default(s)} | {s.help.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def test_the_readme_lists_every_setting() -> None:
    text = README.read_text(encoding="utf-8")
    assert settings_table() in text, "README's settings table is stale: run `python tests/test_readme.py`"
    for key, setting in SETTINGS.items():
        assert f"| `{key}` |" in text
        assert setting.env is None or f"`{setting.env}`" in text


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

"""Grounded extraction as a capability: off unless `extraction.enabled` (or ORGKIT_EXTRACTION=1).

The capability names the model roles it uses with their persona files and
the schema templates it ships. Its operations (schema, extract, audit) are
absent from every listing while it is off, and calling one says how to turn
it on.
"""

from __future__ import annotations

from ..config import Config, without_notes

NAME = "grounded-extraction"
ROLES = ("extractor", "scribe", "auditor")
HOW_TO_ENABLE = "enable it with ORGKIT_EXTRACTION=1 or `extraction.enabled = true` in NOTES/orgkit.toml"


def enabled(config: Config | None) -> bool:
    """Whether extraction is on: from the resolved config, else from the environment alone."""
    if config is not None:
        return bool(config["extraction.enabled"])
    return bool(without_notes("extraction.enabled"))


def capability(config: Config | None = None) -> dict:
    """The capability record the skills registry collects."""
    from ..llm.prompts import persona_path  # the model seam's imports are heavy: only when listed
    from .schema import TEMPLATE_DIR

    roles = {role: str(persona_path(config, role)) for role in ROLES if persona_path(config, role).is_file()}
    return {"name": NAME, "enabled": enabled(config), "skills": [], "roles": roles,
            "schemas": {p.stem: str(p) for p in sorted(TEMPLATE_DIR.glob("*.org"))}}

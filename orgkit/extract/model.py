"""The extractor and the auditor as model roles, through the model seam.

The extractor gets the schema's dimensions with their rubrics and the source
text (in chunks when long) and returns candidates `{dimension, claim, quote}`;
the auditor gets numbered claim+quote pairs and says which quotes support
their claims. Both replies are JSON checked against a schema by the seam.
"""

from __future__ import annotations

from ..config import Config
from ..llm import complete, persona
from .schema import Schema

CHUNK_CHARS = 12_000

CANDIDATES_SCHEMA = {
    "type": "object", "required": ["claims"],
    "properties": {"claims": {"type": "array", "items": {
        "type": "object", "required": ["dimension", "claim", "quote"],
        "properties": {"dimension": {"type": "string"}, "claim": {"type": "string"},
                       "quote": {"type": "string"}}}}},
}

VERDICTS_SCHEMA = {
    "type": "object", "required": ["verdicts"],
    "properties": {"verdicts": {"type": "array", "items": {
        "type": "object", "required": ["item", "supported"],
        "properties": {"item": {"type": "integer"}, "supported": {"type": "boolean"},
                       "reason": {"type": "string"}}}}},
}


def rubric_text(schema: Schema) -> str:
    parts = [f"Schema: {schema.title} ({schema.name})"]
    if schema.description:
        parts.append(schema.description)
    parts.append("Dimensions:")
    for dim in schema.dimensions:
        parts.append(f"- {dim.name}: {' '.join(dim.rubric.split())}")
    return "\n".join(parts)


def chunks(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """The text in pieces of at most `limit` characters, cut at blank lines where possible."""
    if len(text) <= limit:
        return [text]
    out, current = [], ""
    for block in text.split("\n\n"):
        piece = block + "\n\n"
        if current and len(current) + len(piece) > limit:
            out.append(current)
            current = ""
        while len(piece) > limit:
            out.append(piece[:limit])
            piece = piece[limit:]
        current += piece
    if current.strip():
        out.append(current)
    return out


def extractor_messages(config: Config, schema: Schema, text: str, part: int, parts: int,
                       guidance: str = "") -> list[dict]:
    """The extractor's request; `guidance` (the guidance file's slice, with
    --use-extraction-feedback) follows the persona, and is empty otherwise."""
    where = f" (part {part} of {parts})" if parts > 1 else ""
    user = (f"{rubric_text(schema)}\n\nReply as JSON: {{\"claims\": [{{\"dimension\": NAME, \"claim\": ..., "
            f"\"quote\": ...}}]}}.\n\nThe document{where}:\n<<<\n{text}\n>>>")
    return [{"role": "system", "content": persona(config, "extractor") + guidance},
            {"role": "user", "content": user}]


def extract_with_model(config: Config, schema: Schema, text: str, guidance: str = "") -> list[dict]:
    """Candidates from the configured extractor model (ModelFailure propagates: the task fails)."""
    pieces = chunks(text)
    found: list[dict] = []
    for n, piece in enumerate(pieces, 1):
        reply = complete(config, "extractor",
                         extractor_messages(config, schema, piece, n, len(pieces), guidance), CANDIDATES_SCHEMA)
        found.extend(reply.data["claims"])
    return found


def auditor_messages(config: Config, claims: list[dict]) -> list[dict]:
    items = "\n".join(f"{n}. claim: {c['claim']}\n   quote: {' '.join(c['quote'].split())}"
                      for n, c in enumerate(claims, 1))
    user = ("Reply as JSON: {\"verdicts\": [{\"item\": N, \"supported\": true|false, \"reason\": ...}]}, "
            f"one verdict per item.\n\n{items}")
    return [{"role": "system", "content": persona(config, "auditor")}, {"role": "user", "content": user}]


def judge_with_model(config: Config, claims: list[dict]) -> list[dict]:
    """The claims whose quote the auditor model judges not to support them: [{claim_id, reason}]."""
    if not claims:
        return []
    reply = complete(config, "auditor", auditor_messages(config, claims), VERDICTS_SCHEMA)
    weak = []
    for verdict in reply.data["verdicts"]:
        n = verdict["item"]
        if 1 <= n <= len(claims) and not verdict["supported"]:
            weak.append({"claim_id": claims[n - 1]["claim_id"], "reason": verdict.get("reason", "")})
    return weak

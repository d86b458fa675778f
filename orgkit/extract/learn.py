"""Verdicts as data: a reviewer's accepts and rejects, read, checked, stored, and fitted on.

`orgkit extract learn VERDICTS.jsonl --schema S` reads one JSON object a line
(`source`, `dimension` (the schema's tag), `quote`, `verdict`: accept or
reject). The whole file is checked before anything is kept: the first fault
is refused in one line naming its line number. Each source is then copied
into the data dir under its hash (as extraction does), so the fit can read the
text its verdicts were given on after the original moves, and the verdicts are
stored as one batch of feedback events (`feedback.verdicts`).

The scorer (`scorer.py`) is fitted on every verdict of a schema: those given
in bulk, and what people do to the claim notes a run wrote (deleted: the
quote rejected; retagged: moved to the other dimension; edited: accepted).
The fit is kept in `DATA/extract/fits/SCHEMA.json` with the schema it was
fitted under; `orgkit evolve` refits, a run reads the fit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..config import Config
from ..errors import OrgkitError
from ..feedback.events import Event, load_events, verdict_id
from ..feedback.generated import now
from ..feedback.paths import schema_stem
from ..feedback.verdicts import load_verdicts, record_verdicts
from ..files import replace_file
from .embedder import local_embedder
from .schema import Schema, parse_schema
from .scorer import Fit, Verdict, fit_verdicts, prior_fit
from .sources import FORMATS, decode_source, ingest, read_copy, rel, sources_dir
from .store import RunStore, list_runs

FIELDS = ("source", "dimension", "quote", "verdict")
VERDICTS = ("accept", "reject")


@dataclass(frozen=True)
class Given:
    """One checked line of a verdicts file."""

    line: int
    source: Path
    dimension: str  # the tag
    quote: str
    verdict: str


def read_verdicts(path: Path, schema: Schema, resolve: Callable[[str], Path]) -> list[Given]:
    """Every verdict of `path`, checked; an OrgkitError naming the first bad line otherwise.
    `resolve` turns a `source` as written into a file (and refuses one the caller may not name)."""
    try:
        lines = decode_source(path.read_bytes(), str(path)).splitlines()
    except OSError as exc:
        raise OrgkitError(f"{path}: cannot read: {exc.strerror}") from None
    tags = {d.tag for d in schema.dimensions}
    texts: dict[Path, str] = {}
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise OrgkitError(f"{where}: not a JSON object ({exc.msg})") from None
        if not isinstance(data, dict):
            raise OrgkitError(f"{where}: not a JSON object")
        missing = [f for f in FIELDS if not isinstance(data.get(f), str) or not data[f]]
        if missing:
            raise OrgkitError(f"{where}: missing field {missing[0]!r} (each line needs {', '.join(FIELDS)})")
        if data["dimension"] not in tags:
            raise OrgkitError(f"{where}: unknown dimension {data['dimension'][:80]!r} "
                              f"(schema {schema.name}'s tags: {', '.join(sorted(tags))})")
        if data["verdict"] not in VERDICTS:
            raise OrgkitError(f"{where}: unknown verdict {data['verdict'][:80]!r} (accept or reject)")
        try:
            source = resolve(data["source"])
        except OrgkitError as exc:
            raise OrgkitError(f"{where}: {exc}") from None
        if not source.is_file():
            raise OrgkitError(f"{where}: source not found: {data['source'][:200]}")
        if source.suffix.lower() not in FORMATS:
            raise OrgkitError(f"{where}: unsupported source type {source.suffix or '(none)'!r}")
        if source not in texts:
            try:
                texts[source] = decode_source(source.read_bytes(), data["source"])
            except OrgkitError as exc:
                raise OrgkitError(f"{where}: {exc}") from None
        if data["quote"] not in texts[source]:
            raise OrgkitError(f"{where}: the quote is not in {data['source'][:200]}: {data['quote'][:80]!r}")
        out.append(Given(n, source, data["dimension"], data["quote"], data["verdict"]))
    return out


def learn(config: Config, path: Path, schema: Schema, resolve: Callable[[str], Path]) -> dict:
    """Check `path` whole, then keep its sources and store its verdicts as one batch."""
    given = read_verdicts(path, schema, resolve)
    events = []
    for verdict in given:
        copy = ingest(str(verdict.source), config.data_dir)
        events.append(Event(id=verdict_id(schema.name, copy.sha256, verdict.dimension, verdict.verdict,
                                          verdict.quote),
                            source="verdict", extractor="extractor", node_type="claim", field=verdict.dimension,
                            action=verdict.verdict, source_path=rel(config, verdict.source), before=None,
                            after=verdict.quote, schema=schema.name, schema_version=schema.id,
                            item_id=copy.sha256, time=now()))
    new = record_verdicts(config, schema.name, events)
    keep_schema(config, schema)
    return {"schema": schema.name, "verdicts": len(given), "new": len(new),
            "accept": sum(v.verdict == "accept" for v in given), "reject": sum(v.verdict == "reject" for v in given),
            "sources": len({v.source for v in given}), "file": str(path)}


def fits_dir(config: Config) -> Path:
    return config.data_dir / "extract" / "fits"


def keep_schema(config: Config, schema: Schema) -> None:
    """Keep the schema the verdicts were given under beside its fit, so `evolve` refits without it being named."""
    path = fits_dir(config) / f"{schema_stem(schema.name)}.org"
    if not path.exists() or path.read_text(encoding="utf-8") != schema.text:
        replace_file(path, schema.text.encode("utf-8"))


def schema_verdicts(config: Config, schema: Schema) -> list[Verdict]:
    """Every verdict on `schema`'s claims: those given in bulk, then what people did to claim notes."""
    names = {d.tag: d.name for d in schema.dimensions}
    out = []
    for event in load_verdicts(config, schema.name):
        copy = _copy(config, event.item_id)
        if copy is None or event.field not in names:
            continue
        out.append(Verdict(event.item_id, read_copy(copy), FORMATS.get(copy.suffix, "text"), names[event.field],
                           str(event.after or ""), event.action == "accept"))
    return out + _note_verdicts(config, schema)


def _copy(config: Config, sha: str) -> Path | None:
    if not re.fullmatch(r"[0-9a-f]{64}", sha or ""):
        return None
    return next(iter(sorted(sources_dir(config.data_dir).glob(f"{sha}.*"))), None)


def _note_verdicts(config: Config, schema: Schema) -> list[Verdict]:
    """What people did to the claim notes of `schema`'s runs, as verdicts on their quotes: a claim
    deleted rejects its quote; a claim retagged with another dimension's tag rejects it under its
    own dimension and accepts it under the other; a claim otherwise edited (its wording corrected)
    accepts it. Claims missed altogether come in through `extract learn` as accepted quotes."""
    acts: dict[str, list[tuple[str | None, bool]]] = {}  # claim ID -> (dimension tag or None: its own, accept)
    by_tag = {d.tag: d.name for d in schema.dimensions}
    for e in load_events(config):
        if e.source != "override" or e.extractor != "extractor" or e.node_type != "claim":
            continue
        if e.field == "note" and e.action == "delete":
            acts.setdefault(e.node_id, []).append((None, False))
        elif e.field == "tags" and isinstance(e.after, list):
            moved = [t for t in e.after if t in by_tag and t not in (e.before or [])]
            acts.setdefault(e.node_id, []).extend([(None, False)] + [(t, True) for t in moved] if moved else [])
        elif e.action == "edit":
            acts.setdefault(e.node_id, []).append((None, True))
    if not acts:
        return []
    out = []
    for name in list_runs(config.data_dir):
        store = RunStore.open(config.data_dir, name)
        info = store.read("run.json")
        if info.get("schema", {}).get("name") != schema.name:
            continue
        for index, source in enumerate(info["sources"]):
            written = store.read(f"claims-{index}.json") or {}
            copy = _copy(config, source["sha256"])  # by its hash: run.json's own path is not trusted
            claims = [c for c in (*written.get("claims", []), *written.get("deleted", []))
                      if c["claim_id"] in acts and schema.dimension(c["dimension"]) is not None]
            if copy is None or not claims:
                continue
            text = read_copy(copy)
            for claim in claims:
                for tag, accept in acts[claim["claim_id"]]:
                    out.append(Verdict(source["sha256"], text, source["fmt"],
                                       by_tag[tag] if tag else claim["dimension"], claim["quote"], accept))
    return out


def refit(config: Config, schema: Schema) -> Fit:
    """Fit `schema`'s scorer on its verdicts now, and keep the fit; it measures likeness as a run
    will (with the local embedding model when one is configured by path, else by word stems)."""
    fit = fit_verdicts(schema, schema_verdicts(config, schema), local_embedder(config, []))
    replace_file(fits_dir(config) / f"{schema_stem(schema.name)}.json",
                 json.dumps(fit.to_json(), ensure_ascii=False, sort_keys=True).encode("utf-8"))
    return fit


def refit_all(config: Config) -> list[dict]:
    """Refit every schema that has verdicts (`orgkit evolve`): what each fit now rests on."""
    out = []
    folder = fits_dir(config)
    for path in sorted(folder.glob("*.org")) if folder.is_dir() else []:
        schema = parse_schema(path.read_text(encoding="utf-8"), path, "file")
        out.append({"schema": schema.name, **refit(config, schema).used})
    return out


def load_fit(config: Config, schema: Schema) -> Fit:
    """The fit kept for `schema`, or the prior (today's rules) when there is none."""
    path = fits_dir(config) / f"{schema_stem(schema.name)}.json"
    try:
        return Fit.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return prior_fit(schema)


def few_shot(config: Config, schema: Schema, limit: int = 12) -> str:
    """The reviewer's verdicts as examples for the model's prompt: quotes taken, quotes not taken."""
    verdicts = schema_verdicts(config, schema)
    if not verdicts:
        return ""
    tags = {d.name: d.tag for d in schema.dimensions}
    taken = [v for v in verdicts if v.accept][: limit - limit // 2]
    shown = taken + [v for v in verdicts if not v.accept][: limit // 2]
    lines = ["", "", "A reviewer's verdicts on earlier documents under this schema (follow their judgement):"]
    for v in shown:
        quote = " ".join(v.quote.split())[:300]
        lines.append(f"- {'taken' if v.accept else 'not a claim'} as {v.dimension} ({tags.get(v.dimension, '')}): "
                     f"\"{quote}\"")
    return "\n".join(lines)

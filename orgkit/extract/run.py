"""A run: prepare (tool-side), then per source extractor -> scribe -> auditor, then the run note.

Preparation ingests every source (a copy keyed by its hash), writes its source
note and an empty hub note, and records the task graph in the data dir.
Sources then run concurrently (model calls overlap); the scribe writes notes
one at a time through the single note writer. Each task's state and output
are saved as it finishes, so `resume` after a crash redoes only what was not
done, and finds the notes already written by their derived IDs.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Sequence

from ..config import Config
from ..errors import OrgkitError
from ..feedback.generated import Generator, content_version, record_generated
from ..index.embedding import EmbedProgress, Progress
from ..llm import ModelUnavailable, resolve
from . import notes as nt
from .anchor import find_quote
from .audit import verify_source
from ..org.escape import one_line
from ..org.unique import NoteIds
from ..locator import run_note_ids
from .model import extract_with_model, judge_with_model
from .offline import Demotions, demoted, held_to_claims
from .scorer import MIN_SCORE, Fit, extract_scored
from .schema import Schema, parse_schema, resolve_schema
from ..confine import inside
from .embedder import local_embedder
from .sources import Source, ingest, read_copy, rel, sources_dir
from .store import RunStore, claim_note, new_run_id
from .supersede import earlier_claims, earlier_source, keep, key, mark_vanished
from .units import segment

MAX_WORKERS = 4
_WRITER = threading.Lock()  # the scribe writes one note at a time, across sources


@dataclass
class Context:
    """What the tasks of one run share: settings, the schema, the store, and notices for stderr."""

    config: Config
    schema: Schema
    store: RunStore
    notices: list[str] = field(default_factory=list)
    embed: Callable | None = None
    use_model: bool = False
    guidance: str = ""  # the guidance slice for the extractor's prompt (--use-extraction-feedback)
    demote: Demotions | None = None  # what the offline extractor demotes (--use-extraction-feedback)
    fit: Fit | None = None  # the offline extractor's scorer (the prior, or fitted on verdicts)
    min_score: float | None = None  # --min-score: the operating point, over the schema's and the fit's
    examples: str = ""  # the reviewer's verdicts as examples for the model's prompt
    ids: NoteIds = field(init=False)  # the notes' IDs, read once for the run's many writes

    def __post_init__(self) -> None:
        self.ids = run_note_ids(self.config.notes)

    @property
    def notes(self) -> Path:
        return self.config.notes


def extraction_enabled(config: Config) -> bool:
    return bool(config["extraction.enabled"])


def require_enabled(config: Config) -> None:
    if not extraction_enabled(config):
        raise OrgkitError("grounded extraction is off: enable it with ORGKIT_EXTRACTION=1 "
                          "or `extraction.enabled = true` in orgkit.toml")


def prepare(config: Config, given: list[str], schema_spec: str, waiting: Collection[str]) -> Context:
    """Ingest the sources, write source and hub notes, and record the run's task graph. `waiting`
    are the notes that are deposits waiting for review (the caller asks the memory flow): no schemas."""
    require_enabled(config)
    if not given:
        raise OrgkitError("no sources given")
    schema = resolve_schema(config.notes, schema_spec, waiting)
    ingested, repeated = _distinct([ingest(g, config.data_dir) for g in given])
    run = new_run_id()
    store = RunStore.create(config.data_dir, run)
    store.write_text("schema.org", schema.text)
    sources = []
    for index, src in enumerate(ingested):
        with _WRITER:
            written = nt.source_note(config.notes, src.name, src.sha256, rel(config, src.copy), str(src.path))
        hub_id = nt.stable_id("hub", run, str(index), src.sha256)
        sources.append({"given": src.given, "path": str(src.path), "name": src.name, "sha256": src.sha256,
                        "fmt": src.fmt, "copy": str(src.copy), "source_id": written.id,
                        "source_note": rel(config, written.path), "hub_id": hub_id,
                        "hub_note": rel(config, nt.hub_path(config.notes, run, index, src.name)),
                        "supersedes": earlier_source(config.data_dir, schema.name, str(src.path), src.sha256, run)})
    store.write("run.json", {"run": run, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                             "schema": {"name": schema.name, "id": schema.id, "path": str(schema.path),
                                        "origin": schema.origin},
                             "run_note_id": nt.stable_id("run", run), "sources": sources})
    store.write("tasks.json", {f"{kind}:{i}": {"state": "pending"} for i in range(len(sources))
                               for kind in ("extract", "scribe", "audit")} | {"run-note": {"state": "pending"}})
    ctx = Context(config, schema, store)
    ctx.notices += [f"{src.given}: the same text as {first.given}, extracted once" for src, first in repeated]
    for index, source in enumerate(sources):
        _write_hub(ctx, index, source, [])
    return ctx


def _distinct(ingested: list[Source]) -> tuple[list[Source], list[tuple[Source, Source]]]:
    """The sources with distinct text, and each repeat with the source it repeats: a claim's
    IDs come from the text it quotes, so a text given twice would give two notes one ID."""
    first: dict[str, Source] = {}
    repeated: list[tuple[Source, Source]] = []
    for src in ingested:
        if src.sha256 in first:
            repeated.append((src, first[src.sha256]))
        else:
            first[src.sha256] = src
    return list(first.values()), repeated


def open_run(config: Config, run: str) -> Context:
    """The context of an existing run, with the schema it started with."""
    require_enabled(config)
    return _reopen(config, run)


def _reopen(config: Config, run: str) -> Context:
    store = RunStore.open(config.data_dir, run)
    info = store.read("run.json")
    check_run_file(config, run, info)
    text = (store.root / "schema.org").read_text(encoding="utf-8")
    schema = parse_schema(text, Path(info["schema"]["path"]), info["schema"]["origin"])
    return Context(config, schema, store)


def check_run_file(config: Config, run: str, info: object) -> None:
    """Refuse a run.json whose paths lie where orgkit never puts them: copies in the data dir's
    sources folder, source and hub notes inside the notes (a run file is data an agent may have reached)."""
    where = f"run {run}: run.json"
    if not isinstance(info, dict) or not isinstance(info.get("sources"), list) \
            or not isinstance(info.get("schema"), dict):
        raise OrgkitError(f"{where} is not a run file")
    for source in info["sources"]:
        if not isinstance(source, dict) or not all(isinstance(source.get(k), str)
                                                   for k in ("copy", "source_note", "hub_note", "path", "given")):
            raise OrgkitError(f"{where}: a source lacks its paths")
        if not inside(Path(source["copy"]), sources_dir(config.data_dir)):
            raise OrgkitError(f"{where}: source copy {source['copy'][:200]!r} is outside the data dir")
        for which in ("source_note", "hub_note"):
            if Path(source[which]).is_absolute() or not inside(config.notes / source[which], config.notes):
                raise OrgkitError(f"{where}: {which} {source[which][:200]!r} is outside the notes dir")


def use_feedback(ctx: Context) -> None:
    """Give the extractor's prompt the guidance for the notes it writes (claims and quotes), and
    the offline extractor what the deletions of claims teach (see `corrections`)."""
    from ..feedback.guidance import guidance_prompt
    from .corrections import demotions

    ctx.guidance = guidance_prompt(ctx.config, "extractor", ["claim", "quote"])
    ctx.demote = demotions(ctx.config)


def choose_extractor(ctx: Context) -> None:
    """A configured extractor model (shown the reviewer's verdicts as examples), else the offline
    extractor under the schema's fit (said once, on stderr); the run records which fit it used."""
    from .learn import few_shot, load_fit

    try:
        target = resolve(ctx.config, "extractor")
        ctx.use_model = True
        ctx.notices.append(f"extractor: {target.describe()}")
        ctx.examples = few_shot(ctx.config, ctx.schema)
    except ModelUnavailable as exc:
        ctx.use_model = False
        ctx.notices.append(f"{exc}; using the offline extractor")
        ctx.embed = local_embedder(ctx.config, ctx.notices)
        ctx.fit = load_fit(ctx.config, ctx.schema)
        info = ctx.store.read("run.json")
        ctx.store.write("run.json", info | {"fit": ctx.fit.used | {"min_score": operating_point(ctx)}})


def operating_point(ctx: Context) -> float:
    """The score a claim needs (see `min_score`)."""
    return min_score(ctx.min_score, ctx.schema, ctx.fit)


def fits_own(given: float | None, schema: Schema) -> bool:
    """Whether the fit's own operating point is the cut (no --min-score, no :MIN_SCORE:): then
    the units today's rules take are kept whatever their score (`scorer.choose`)."""
    return given is None and schema.min_score is None


def min_score(given: float | None, schema: Schema, fit: Fit | None) -> float:
    """The score a claim needs: --min-score, else the schema's :MIN_SCORE:, else the fit's own."""
    if given is not None:
        return given
    if schema.min_score is not None:
        return schema.min_score
    return fit.threshold if fit is not None else MIN_SCORE


def execute(ctx: Context, candidates_for: Callable[[int, dict, str], list[dict]] | None = None,
            progress: Progress | None = None) -> dict:
    """Run every task not yet done; `candidates_for` replaces the extractor (committed candidates);
    `progress` hears of each source done, in order."""
    sources = ctx.store.read("run.json")["sources"]
    if candidates_for is None:
        choose_extractor(ctx)
    workers = max(1, min(MAX_WORKERS, len(sources)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        finished = pool.map(lambda i: _source_pipeline(ctx, i, sources[i], candidates_for), range(len(sources)))
        for done, _ in enumerate(finished, 1):
            if progress is not None:
                progress(EmbedProgress(done, len(sources), unit="sources", what="extracting"))
    _write_run_note(ctx, sources)
    return result(ctx)


def _source_pipeline(ctx: Context, index: int, source: dict, candidates_for) -> None:
    store = ctx.store
    if store.state(f"extract:{index}") != "done":
        try:
            text = read_copy(Path(source["copy"]))
            raw = candidates_for(index, source, text) if candidates_for else _extract(ctx, source, text)
            found = ground(ctx.schema, text, raw, ctx.config["extraction.min_quote_chars"])
            if candidates_for is None and ctx.use_model:  # a model's candidates are held to the offline rules
                found["grounded"], cut = held_to_claims(segment(text, source["fmt"]), ctx.schema, found["grounded"])
                found["dropped"] += cut
            store.write(f"candidates-{index}.json", found)
            store.set_task(f"extract:{index}", "done")
        except OrgkitError as exc:
            store.set_task(f"extract:{index}", "failed", str(exc))
            return
    if store.state(f"scribe:{index}") != "done":
        scribe(ctx, index, source)
    if store.state(f"audit:{index}") != "done":
        audit_source(ctx, index, source)


def _extract(ctx: Context, source: dict, text: str) -> list[dict]:
    if ctx.use_model:
        return extract_with_model(ctx.config, ctx.schema, text, ctx.examples + ctx.guidance)
    assert ctx.fit is not None
    picks = extract_scored(segment(text, source["fmt"]), ctx.schema, ctx.fit, operating_point(ctx), ctx.embed,
                           rules=fits_own(ctx.min_score, ctx.schema))
    if ctx.demote:
        picks = demoted(picks, ctx.demote)
    return [{"dimension": p.dimension, "claim": p.claim, "quote": p.quote, "start": p.start, "end": p.end,
             "score": round(p.score, 4)} for p in picks]


def ground(schema: Schema, text: str, raw: list[dict], min_quote: int = 0) -> dict:
    """Anchor each candidate's quote in the text; drop (and count) the ones not found when grounded,
    and those shorter than `min_quote` characters unless they are a whole line of the text (a
    one-letter quote is found almost anywhere, so it shows nothing)."""
    kept, dropped = [], []
    for cand in raw:
        quote = str(cand.get("quote") or "")
        dimension = _dimension_name(schema, one_line(str(cand.get("dimension") or "")))
        claim = one_line(str(cand.get("claim") or "")) or dimension
        hint = cand.get("start") if isinstance(cand.get("start"), int) else None
        if len(quote.strip()) < min_quote and not _whole_line(text, quote):  # grounds nothing
            dropped.append({"dimension": dimension, "claim": claim, "quote": quote, "reason": "short"})
            continue
        span = find_quote(text, quote, near=hint)
        if span is None:
            if schema.grounded:
                dropped.append({"dimension": dimension, "claim": claim, "quote": quote})
                continue
            kept.append({"dimension": dimension, "claim": claim, "quote": quote, "start": -1, "end": -1})
            continue
        start, end = span
        entry = {"dimension": dimension, "claim": claim, "quote": text[start:end], "start": start, "end": end}
        if isinstance(cand.get("score"), (int, float)):
            entry["score"] = cand["score"]
        if entry not in kept:
            kept.append(entry)
    return {"grounded": kept, "dropped": dropped}


def _whole_line(text: str, quote: str) -> bool:
    """Whether `quote` is a whole line of `text` (a bare `Accepted` under a Status heading)."""
    wanted = quote.strip()
    return bool(wanted) and any(line.strip() == wanted for line in text.splitlines())


def _dimension_name(schema: Schema, name: str) -> str:
    """The schema's own spelling of a dimension given loosely (its name or tag, any case); else as given."""
    wanted = " ".join(name.lower().split())
    return next((d.name for d in schema.dimensions if wanted in (d.name.lower(), d.tag.lower())), name)


def scribe(ctx: Context, index: int, source: dict) -> None:
    """Write a claim note (its quote inside) per candidate, then the hub; refuse untagged notes.

    When an earlier run extracted the same source under the same schema, its
    claims are carried over instead of written again (see `supersede`).
    """
    found = ctx.store.read(f"candidates-{index}.json", {"grounded": []})
    claims, rejected, declined = [], [], 0
    earlier = source.get("supersedes")
    recorded = earlier_claims(ctx.notes, ctx.config.data_dir, earlier, ctx.notices) if earlier else []
    before = {key(c): c for c in recorded}
    for cand in found["grounded"]:
        dim = ctx.schema.dimension(cand["dimension"])
        old = before.pop(key(cand), None)
        if old is not None:
            with _WRITER:
                kept = keep(ctx.notes, old, cand, source, dim.tag if dim else "")
            if kept is None:
                declined += 1
            else:
                kept_from = old.get("run", (earlier or {}).get("run"))
                claims.append({**kept, "source": source["given"], "kept_from": kept_from})
            continue
        claim_id, quote_id, text = nt.claim_and_quote(ctx.notes, ctx.store.run, ctx.schema, source,
                                                      source["hub_id"], cand)
        path = nt.claim_path(ctx.notes, ctx.store.run, index, cand, claim_id)
        try:
            nt.check_tags(text, path, ctx.schema)
        except nt.NoteRejected as exc:
            rejected.append({"dimension": cand["dimension"], "claim": cand["claim"], "reason": str(exc)})
            continue
        with _WRITER:
            note = nt.write_note(ctx.ids, path, text, claim_id)
        _generated(ctx, "extractor", "claim", note, text, source["given"])
        claims.append({"source": source["given"], "dimension": cand["dimension"], "claim": cand["claim"],
                       "quote": cand["quote"], "start": cand["start"], "end": cand["end"],
                       "claim_id": claim_id, "quote_id": quote_id, "run": ctx.store.run,
                       "claim_file": rel(ctx.config, path), "score": cand.get("score")})
    vanished = []
    for old in before.values():
        with _WRITER:
            if mark_vanished(ctx.notes, old, ctx.store.run):
                vanished.append(old)
    _write_hub(ctx, index, source, claims, vanished)
    ctx.store.write(f"claims-{index}.json", {"claims": claims, "rejected": rejected, "vanished": vanished,
                                             "declined": declined})
    ctx.store.set_task(f"scribe:{index}", "done")


def _write_hub(ctx: Context, index: int, source: dict, claims: list[dict], vanished: Sequence[dict] = ()) -> None:
    text = nt.hub_text(source["hub_id"], ctx.store.run, ctx.schema, source, claims, vanished)
    with _WRITER:
        written = nt.replace_note(ctx.ids, ctx.notes / source["hub_note"], text, source["hub_id"])
    _generated(ctx, "scribe", "hub", written, text, source["given"], always=True)


def _generated(ctx: Context, role: str, node_type: str, written: nt.Written, text: str, source_path: str,
               always: bool = False) -> None:
    """Remember a note as the run wrote it, so the user's later corrections become feedback events.

    A note found already written (a resumed run) is recorded only if it was not
    yet; `always` records a note the run rewrites (hub and run notes).
    """
    record_generated(ctx.config, file=written.path, node_id=written.id, node_type=node_type,
                     generator=Generator(role, ctx.schema.name, content_version(ctx.schema.text)),
                     source_path=source_path, text=text, if_absent=not (always or written.created))


def audit_source(ctx: Context, index: int, source: dict) -> None:
    """Verify every quote of the source; with an auditor model, flag weak support."""
    written = ctx.store.read(f"claims-{index}.json", {"claims": []})
    report = verify_source(ctx.notes, ctx.config.data_dir, source, written["claims"], dimension_tags(ctx.schema),
                           reanchor=False)
    report["flags"] = []
    try:
        report["flags"] = judge_with_model(ctx.config, written["claims"])
        report["judged"] = True
    except ModelUnavailable:
        report["judged"] = False
    except OrgkitError as exc:
        report["judged"] = False
        report["problems"].append(f"auditor model: {exc}")
    ctx.store.write(f"audit-{index}.json", report)
    ctx.store.set_task(f"audit:{index}", "done")


def dimension_tags(schema: Schema) -> dict[str, str]:
    return {d.name: d.tag for d in schema.dimensions}


def rewrite_hub(ctx: Context, index: int) -> None:
    """Write source `index`'s hub again from what the run recorded (after an audit or a deletion)."""
    source = ctx.store.read("run.json")["sources"][index]
    written = ctx.store.read(f"claims-{index}.json", {"claims": []})
    _write_hub(ctx, index, source, written["claims"], written.get("vanished", []))


def drop_deleted_claims(config: Config, locate: Callable[[list[str]], dict[str, str]]) -> int:
    """Take the claims whose notes a person deleted out of their runs' records and hubs (through the
    one writer), so no hub links a note that is gone; the number taken out. A claim note moved to
    another file is followed there (`locate`: node IDs -> the files holding them, relative to the
    notes), not taken for deleted. Costs a directory listing when nothing was ever extracted."""
    from .store import list_runs

    dropped = 0
    for name in list_runs(config.data_dir):
        ctx = None
        store = RunStore.open(config.data_dir, name)
        for index, _ in enumerate(store.read("run.json")["sources"]):
            written = store.read(f"claims-{index}.json")
            if not written:
                continue
            missing = [c for c in written["claims"] if not _holds(claim_note(config.notes, c), c["claim_id"])]
            if not missing:
                continue
            found = locate([c["claim_id"] for c in missing])
            for claim in missing:
                claim["claim_file"] = found.get(claim["claim_id"], claim["claim_file"])
            gone = [c for c in missing if c["claim_id"] not in found]
            written["claims"] = [c for c in written["claims"] if c not in gone]
            written["deleted"] = written.get("deleted", []) + gone
            store.write(f"claims-{index}.json", written)
            if gone:
                ctx = ctx or _reopen(config, name)
                rewrite_hub(ctx, index)
                dropped += len(gone)
    return dropped


def _holds(path: Path | None, node_id: str) -> bool:
    if path is None:  # recorded outside the notes: not read, and taken for gone
        return False
    try:
        return node_id in path.read_text(encoding="utf-8")
    except OSError:
        return False


def _write_run_note(ctx: Context, sources: list[dict]) -> None:
    info = ctx.store.read("run.json")
    audits = [ctx.store.read(f"audit-{i}.json") for i in range(len(sources))]
    failed = failures(ctx)
    text = nt.run_note_text(info["run_note_id"], ctx.store.run, ctx.schema, sources, audits, failed)
    with _WRITER:
        written = nt.replace_note(ctx.ids, ctx.notes / nt.NOTES_DIR / ctx.store.run / "run.org", text,
                                  info["run_note_id"])
    _generated(ctx, "scribe", "run", written, text, ctx.store.run, always=True)
    ctx.store.set_task("run-note", "done")


def failures(ctx: Context) -> list[dict]:
    sources = ctx.store.read("run.json")["sources"]
    out = []
    for task, entry in ctx.store.tasks().items():
        if entry.get("state") == "failed":
            index = int(task.split(":")[1]) if ":" in task else -1
            out.append({"task": task, "source": sources[index]["given"] if index >= 0 else "",
                        "error": entry.get("error", "")})
    return out


def result(ctx: Context) -> dict:
    """The run as `orgkit extract --json` prints it."""
    sources = ctx.store.read("run.json")["sources"]
    keys = ("source", "dimension", "claim", "quote", "start", "end", "claim_id", "quote_id")
    claims, per_source, dropped, rejected = [], [], 0, 0
    for i, _ in enumerate(sources):
        written = ctx.store.read(f"claims-{i}.json", {"claims": [], "rejected": []})
        tags = dimension_tags(ctx.schema)
        claims += [{k: c[k] for k in keys} | {"dimension": tags.get(c["dimension"], c["dimension"]),
                                              "score": c.get("score")} for c in written["claims"]]
        rejected += len(written["rejected"])
        dropped += len(ctx.store.read(f"candidates-{i}.json", {"dropped": []})["dropped"])
        report = ctx.store.read(f"audit-{i}.json")
        if report:
            per_source.append(report)
    audit = {"sources": per_source, "quotes": len(claims),
             "verified": sum(r["verified"] for r in per_source),
             "stale": sum(r["stale"] for r in per_source), "dropped": dropped, "rejected": rejected,
             "flags": [f for r in per_source for f in r.get("flags", [])], "failed": failures(ctx)}
    out = {"run": ctx.store.run, "claims": claims, "audit": audit}
    fit = ctx.store.read("run.json").get("fit")
    return out | {"fit": fit} if fit else out


def explain_sources(config: Config, given: list[str], schema_spec: str, waiting: Collection[str],
                    given_score: float | None) -> dict:
    """For every unit of each source and every dimension: taken or not, its score, features and the
    fit's weights (`extract --explain`); reads the sources where they are, writes nothing."""
    from .learn import load_fit
    from .scorer import explain
    from .sources import FORMATS, decode_source

    require_enabled(config)
    schema = resolve_schema(config.notes, schema_spec, waiting)
    notices: list[str] = []
    fit = load_fit(config, schema)
    cut = min_score(given_score, schema, fit)
    embed = local_embedder(config, notices)
    out = []
    for source in given:
        path = Path(source).expanduser()
        if not path.is_file():
            raise OrgkitError(f"source not found: {source}")
        text = decode_source(path.read_bytes(), source)
        doc = segment(text, FORMATS.get(path.suffix.lower(), "text"))
        out.append({"source": source, "units": explain(doc, schema, fit, cut, embed, fits_own(given_score, schema))})
    return {"schema": schema.name, "fit": fit.used, "min_score": cut, "notices": notices, "sources": out}

"""schema_*, extract, audit: grounded extraction (the `grounded-extraction` capability).

Every operation here belongs to the capability: while it is off they are
absent from listings, and calling one says how to turn it on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection

from ..errors import OrgkitError, stored_records
from . import declare
from .context import OpContext
from ..extract.store import RUN_ID
from ..confine import looks_like_path
from .spec import Op, Param, ParamError

CAP = "grounded-extraction"
SCHEMA = Param("schema", "string", "A schema name (the notes' schemas/, then the templates) or a schema file.",
               metavar="NAME|FILE", paths="name")
RUN: dict[str, Any] = {"pattern": RUN_ID,
                       "pattern_help": "a run ID (letters, digits, '-' and '_'; as `extract` printed it)"}


def _waiting(ctx: OpContext) -> Collection[str]:
    """The notes' schema files that are deposits waiting for review: no schemas."""
    from ..extract.schema import waiting_in_overlay
    from ..instructions import deposits_waiting

    return waiting_in_overlay(ctx.root, lambda: deposits_waiting(ctx.config))


def schema_list(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    from ..extract.schema import list_schemas

    return [s.summary() for s in list_schemas(ctx.root, _waiting(ctx))]


def schema_show(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..extract.schema import resolve_schema

    return resolve_schema(ctx.root, _spec(ctx, args["name"]), _waiting(ctx)).to_json()


def schema_validate(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    """Each named schema (default: every overlay schema) checked, tags included."""
    from ..extract.schema import overlay_dir, resolve_schema
    from ..instructions import SCHEMAS_DIR

    waiting = _waiting(ctx)
    names = args["names"] or [str(p) for p in sorted(overlay_dir(ctx.root).glob("*.org"))
                              if f"{SCHEMAS_DIR}/{p.name}" not in waiting]
    rows = []
    for name in names:
        try:
            schema = resolve_schema(ctx.root, _spec(ctx, name), waiting)
            rows.append({"schema": name, "ok": True, "name": schema.name, "path": str(schema.path)})
        except OrgkitError as exc:
            ctx.error(str(exc))
            rows.append({"schema": name, "ok": False, "error": str(exc)})
    return rows


def schema_init(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..extract.schema import init_schema

    return init_schema(ctx.root, args["template"]).summary()


def _check_extract(args: dict[str, Any]) -> None:
    modes = [m for m in ("resume", "commit") if args[m]]
    if len(modes) > 1:
        raise ParamError("give one of 'resume' and 'commit'")
    if modes and (args["sources"] or args["plan"]):
        raise ParamError(f"'{modes[0]}' takes no sources and no 'plan'")
    if not modes and not args["sources"]:
        raise ParamError("'sources' is required (or 'resume' RUN, or 'commit' FILE)")
    if not modes and not args["schema"]:
        raise ParamError("'schema' is required with sources")
    if args["explain"] and (modes or args["plan"]):
        raise ParamError("'explain' takes sources, not 'plan', 'resume' or 'commit'")


def extract(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..extract import run as runs
    from ..extract.plan import commit, plan

    with stored_records("an extraction run"):
        _record_corrections(ctx)
    if args["explain"]:
        return _explain(ctx, args)
    prompts: list[dict] = []
    with _watching(args["show_prompt"], prompts):
        if args["commit"]:
            with stored_records("the planned run"):
                result = commit(ctx.config, ctx.path(args["commit"]))
        elif args["resume"]:
            with stored_records(f"run {args['resume']}"):
                run = runs.open_run(ctx.config, args["resume"])
                result = _executed(ctx, args, run)
            _notices(ctx, run)
        elif args["plan"]:
            return plan(ctx.config, _sources(ctx, args), _schema(ctx, args), _waiting(ctx),
                        feedback=_wants_feedback(ctx, args))
        else:
            run = runs.prepare(ctx.config, _sources(ctx, args), _schema(ctx, args), _waiting(ctx))
            result = _executed(ctx, args, run)
            _notices(ctx, run)
    for failed in result["audit"]["failed"]:
        ctx.error(f"{failed['task']} ({failed['source']}) failed: {failed['error']} "
                  f"(resume with: orgkit extract --resume {result['run']})")
    if args["show_prompt"]:
        result["prompts"] = prompts
    return result


def _executed(ctx: OpContext, args: dict[str, Any], run: Any) -> dict:
    """Run `run` (new or resumed) under the call's score bar and feedback."""
    from ..extract.run import execute

    run.min_score = args["min_score"]
    _feedback(ctx, args, run)
    return execute(run, progress=ctx.progress)


def _explain(ctx: OpContext, args: dict[str, Any]) -> dict:
    """Why each unit of each source was or was not taken, under the schema's fit; nothing written."""
    from ..extract.run import explain_sources

    result = explain_sources(ctx.config, _sources(ctx, args), _schema(ctx, args), _waiting(ctx), args["min_score"])
    for message in result["notices"]:
        ctx.warn(message)
    return result


def extract_learn(ctx: OpContext, args: dict[str, Any]) -> dict:
    """Store a file of verdicts under a schema, whole or not at all, then refit the schema's scorer."""
    from ..extract.learn import learn, refit
    from ..extract.run import require_enabled
    from ..extract.schema import resolve_schema
    from .boundary import file_inside

    require_enabled(ctx.config)
    schema = resolve_schema(ctx.root, _schema(ctx, args), _waiting(ctx))
    stored = learn(ctx.config, ctx.path(args["verdicts"]), schema, lambda text: file_inside(ctx, text, "source"))
    return stored | {"fit": refit(ctx.config, schema).used}


def _record_corrections(ctx: OpContext) -> None:
    """Before generating more notes, record the corrections made to those generated before
    (and take the claims a person deleted off their hubs)."""
    from ..extract.run import drop_deleted_claims
    from ..feedback.observe import IndexLookup, VaultLookup, observe
    from ..feedback.paths import generated_path
    from ..vault import Vault

    def locate(ids: list[str]) -> dict[str, str]:  # asked only when a claim's note is not where it was
        index = ctx.lookup_index()
        return (IndexLookup(index) if index is not None else VaultLookup(Vault.load(ctx.config.notes))).files(ids)

    drop_deleted_claims(ctx.config, locate)
    if not generated_path(ctx.config).exists():
        return
    index = ctx.lookup_index()
    found = observe(ctx.config, IndexLookup(index) if index is not None else None)
    for message in found.warnings:
        ctx.warn(message)
    if found.events:
        ctx.warn(f"{len(found.events)} new correction events recorded (see `orgkit evolve`)")


def _wants_feedback(ctx: OpContext, args: dict[str, Any]) -> bool:
    return bool(args["use_extraction_feedback"] or ctx.config["feedback.use_guidance"])


def _feedback(ctx: OpContext, args: dict[str, Any], run) -> None:
    """With --use-extraction-feedback (or feedback.use_guidance), the guidance slice goes into the prompt."""
    if _wants_feedback(ctx, args):
        from ..extract.run import use_feedback

        use_feedback(run)


def _sources(ctx: OpContext, args: dict[str, Any]) -> list[str]:
    """The sources as given (a server resolves relative ones from the notes directory)."""
    return [str(ctx.path(s)) if ctx.base is not None or not ctx.trusted else s for s in args["sources"]]


def _schema(ctx: OpContext, args: dict[str, Any]) -> str:
    return _spec(ctx, args["schema"])


def _spec(ctx: OpContext, spec: str) -> str:
    """A schema as given: a name, or a file resolved as the boundary checked it (servers: from the notes)."""
    return str(ctx.path(spec)) if looks_like_path(spec) and not ctx.trusted else spec


def _notices(ctx: OpContext, run) -> None:
    for message in run.notices:
        ctx.warn(message)


class _watching:
    """Collect every prompt sent while the block runs, when asked to."""

    def __init__(self, on: bool, into: list[dict]) -> None:
        self.on, self.into = on, into
        self.inner: Any = None

    def __enter__(self) -> None:
        if self.on:
            from ..llm import watch_prompts

            self.inner = watch_prompts(lambda role, model, messages: self.into.append(
                {"role": role, "model": model, "messages": list(messages)}))
            self.inner.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.inner is not None:
            self.inner.__exit__(*exc)


def _originals(ctx: OpContext) -> list[Path] | None:
    """Where a run's original sources may be re-read from: anywhere for the user, else the notes and source roots."""
    if ctx.trusted:
        return None
    return [ctx.root] + [ctx.root / Path(r).expanduser() for r in ctx.config["extract.source_roots"]]


def audit(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..extract.reaudit import audit_runs

    if bool(args["run"]) == bool(args["all"]):
        raise ParamError("give a RUN or 'all'")
    with stored_records("an extraction run"):
        report = audit_runs(ctx.config, None if args["all"] else [args["run"]], originals=_originals(ctx))
    for problem in report["problems"]:
        ctx.warn(problem)
    return report


declare(Op("schema_list", "Extraction schemas: the notes' own (schemas/) and the shipped templates.", schema_list,
           result="[{name, id, title, grounded, origin, path, dimensions}]", cli=("schema", "list"),
           capability=CAP, role="reader"))
declare(Op("schema_show", "One schema with its dimensions, tags and rubrics.", schema_show,
           params=(Param("name", "string", "A schema name or file.", required=True, positional=True,
                         metavar="NAME|FILE", paths="name"),),
           result="{name, id, title, grounded, origin, path, description, dimensions: [{name, tag, rubric, "
                  "headings}]}", cli=("schema", "show"), capability=CAP, role="reader"))
declare(Op("schema_validate", "Check schemas (default: every schema in the notes' schemas/), tags unique.",
           schema_validate, params=(Param("names", "array", "Schema names or files.", positional=True,
                                          metavar="[NAME|FILE]...", paths="name"),),
           result="[{schema, ok, name, path, error}]", cli=("schema", "validate"), capability=CAP, role="reader"))
declare(Op("schema_init", "Copy a shipped schema template into the notes' schemas/ with a fresh ID.",
           schema_init, params=(Param("template", "string", "The template's name (see schema list).",
                                      required=True, positional=True, metavar="TEMPLATE"),),
           result="{name, id, title, grounded, origin, path, dimensions}", writes=True,
           cli=("schema", "init"), capability=CAP, role="admin"))
declare(Op("extract", "Extract grounded claims from sources under a schema: a claim note each (its quote inside) "
           "linked from a hub per source, then audited. --plan prepares and prints the task graph for an external "
           "agent; --commit writes an agent's candidates with every check; --resume finishes a crashed run.",
           extract, params=(
               Param("sources", "array", "Source files (org, markdown, text); a server's clients may name "
                     "files in the notes dir and in extract.source_roots.", positional=True, metavar="SOURCE...",
                     paths="file", roots="extract.source_roots"),
               SCHEMA,
               Param("plan", "boolean", "Prepare the run and print its task graph with each task's context."),
               Param("commit", "path", "A JSON file of candidates for a planned run: {run, candidates: "
                     "[{source, dimension, claim, quote}]}."),
               Param("resume", "string", "Finish the run RUN after a crash.", metavar="RUN", **RUN),
               Param("show_prompt", "boolean", "Include every prompt sent to a model in the result."),
               Param("use_extraction_feedback", "boolean", "Add the guidance file's bullets for claim and quote "
                     "notes (see `orgkit evolve`) to the extractor's prompt."),
               Param("min_score", "number", "The score (0-1) a claim of the offline extractor needs (default: the "
                     "schema's :MIN_SCORE:, else the operating point its fit chose from the verdicts).",
                     minimum=0, maximum=1, metavar="SCORE"),
               Param("explain", "boolean", "Write nothing; show for every unit of the sources and every dimension "
                     "whether it is taken, its score, its features and the fit's weights.")),
           result="{run, claims: [{source, dimension, claim, quote, start, end, claim_id, quote_id, score}], audit, "
                  "fit?: {digest, verdicts, documents, threshold, caps, min_score}} (explain: {schema, fit, min_score, "
                  "notices, sources: [{source, units: [{dimension, start, end, quote, score, taken, bias, features, "
                  "weights}]}]})",
           writes=True, capability=CAP, check=_check_extract, progress=True, role="admin"))
declare(Op("audit", "Re-verify the quotes of a run (or all runs): re-anchor quotes whose source changed, "
           "mark the ones no longer found stale.", audit,
           params=(Param("run", "string", "The run to audit.", positional=True, metavar="RUN", **RUN),
                   Param("all", "boolean", "Audit every run.")),
           result="{runs, sources: [{run, source, quotes, verified, reanchored, stale, missing, coverage}], "
                  "problems}", writes=True, capability=CAP, role="admin"))
declare(Op("extract_learn", "Learn from a reviewer: store a JSON-lines file of verdicts ({source, dimension: the "
           "schema's tag, quote: exact text of the source, verdict: accept|reject} a line) under a schema, "
           "checked whole first (a bad line is refused by number and nothing is kept), then refit the offline "
           "extractor's scorer on every verdict of the schema.", extract_learn,
           params=(Param("verdicts", "path", "The verdicts file (JSON lines); a server's clients name files "
                         "in the notes dir, and its sources must be there too.", required=True, positional=True,
                         metavar="VERDICTS.jsonl", paths="file"),
                   Param("schema", "string", SCHEMA.help, required=True, metavar="NAME|FILE", paths="name")),
           result="{schema, verdicts, new, accept, reject, sources, file, fit: {digest, verdicts, documents, "
                  "threshold, caps}}", writes=True, role="admin", cli=("extract", "learn"), capability=CAP))

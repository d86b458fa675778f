"""How each operation's result reads in a terminal (without `--json`).

`RENDERERS` maps an operation's name to `render(result, options) -> text`,
where `options` are the command-line values as given. An operation without a
renderer prints its JSON.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .common import warn
from .render_memory import MEMORY_RENDERERS


def nodes(rows: list[dict], options: dict) -> str:
    out = []
    for n in rows:
        path = " > ".join(n["olp"] + [n["title"]]) if n["level"] else n["title"]
        tags = f"  :{':'.join(n['tags'])}:" if n["tags"] else ""
        out.append(f"{n['file']}:{n['line']}: {path}{tags}  [{n['id']}]")
    return "\n".join(out)


def links(rows: list[dict], options: dict) -> str:
    return "\n".join(f"{r['source']} -> {r['dest']} ({r['type']}, pos {r['pos']})" for r in rows)


def backlinks(rows: list[dict], options: dict) -> str:
    return "\n".join(f"{r['file']}:{r['line']}: {r['title']}  [{r['source']}]" for r in rows)


def scan(hits: list[dict], options: dict) -> str:
    """A sparse tree: each file once, its matching headlines indented by level."""
    out: list[str] = []
    current = None
    for hit in hits:
        if hit["file"] != current:
            current = hit["file"]
            out.append(current)
        node = f"[{hit['id'] or hit.get('locator') or 'no ID'}]"
        if hit["level"] == 0:
            out.append(f"  #+title: {hit['title']}  {node}  :{hit['line']}")
            continue
        trail = f"{' > '.join(hit['olp'])} > " if hit["olp"] else ""
        out.append(f"  {'*' * hit['level']} {trail}{hit['title']}  {node}  :{hit['line']}")
    return "\n".join(out)


def _doc(doc: dict, extra: str = "") -> str:
    from ..texts import estimate_tokens

    tokens = doc.get("tokens", estimate_tokens(doc["content"]))
    handle = doc["id"] or doc["locator"]
    header = f"# {doc['title']}  [{handle}]  ({doc['file']}:{doc['line']}, ~{tokens} tokens{extra})"
    return f"{header}\n{doc['content'].rstrip()}\n"


def read(docs: list[dict], options: dict) -> str:
    return "\n".join(_doc(d, f", depth {d['depth']} via {d['via']}" if d["via"] else "") for d in docs)


def index(stats: dict, options: dict) -> str:
    embedded = (f", {stats['embedded']} passage texts embedded ({stats['tokens']:,} tokens)"
                if stats["embedded"] else "")
    pending = f", {stats['pending']} passage texts without vectors" if stats["pending"] else ""
    held = stats.get("indexed")
    units = (f"\nindexed {held['files']} files ({held['files_without_id']} without an ID) and "
             f"{held['headings_with_id'] + held['headings_without_id']} headings as their own units "
             f"({held['headings_without_id']} without an ID)" if held else "")
    return (f"{stats['files']} files: {stats['parsed']} read, {stats['removed']} removed; "
            f"{stats['chunks']} new passages{embedded}{pending} ({stats['seconds']:.2f} s)"
            + (f"; {stats['feedback_events']} new correction events" if stats.get("feedback_events") else "")
            + units)


def recent(rows: list[dict], options: dict) -> str:
    return "\n".join(f"{r['modified']}  {r['file']}: {r['title']}  [{r['id'] or r['locator']}]" for r in rows)


def search(rows: list[dict], options: dict) -> str:
    """One hit per entry; a hit below the relevance floor says so after its score."""
    return "\n".join(f"{r['file']}:{r['line']}: {r['title']}  [{r['id'] or r['locator']}]  {r['score']:.4f}"
                     f"{'' if r['relevant'] else '  (not relevant)'}\n    {r['snippet']}"
                     for r in rows)


def context(doc: dict, options: dict) -> str:
    if doc["omitted"]:
        warn(f"left out {len(doc['omitted'])} note(s); --json lists them")
    return "\n".join(_doc(d) for d in doc["included"])


def new(note: dict, options: dict) -> str:
    return f"{note['file']}  [{note['id']}]"


def id_add(rows: list[dict], options: dict) -> str:
    if not rows:
        return "nothing to do: every entry has an ID"
    files = len({r["file"] for r in rows})
    count = (f"{'would give' if options.get('dry_run') else 'gave'} {len(rows)} ID(s) in {files} file(s)"
             + (" (dry run: nothing written)" if options.get("dry_run") else ""))
    return "\n".join([*(f"{r['file']}:{r['line']}: {r['title'] or '(the file)'}  [{r['id'] or 'new ID'}]"
                         for r in rows), count])


DOCTOR_SHOWN = 10  # findings listed per level without --verbose
_LEVELS = ("error", "warning", "info")


def _fact(value: Any) -> str:
    """A fact in words (`files 529, nodes 574`), never a Python dict."""
    if value is None:
        return "not found"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_fact(v)}" for k, v in value.items() if v is not None)
    return str(value)


def doctor_summary(report: dict) -> str:
    """One line first: ok or broken, and the findings counted by level and check."""
    parts = []
    for level in _LEVELS:
        found = [f["check"] for f in report["findings"] if f["level"] == level]
        if found:
            checks = ", ".join(f"{found.count(c)} {c}" for c in sorted(set(found)))
            parts.append(f"{len(found)} {level}{'s' if len(found) != 1 else ''} ({checks})")
    return f"{'ok' if report['ok'] else 'broken'}: " + ("; ".join(parts) or "nothing to report")


def doctor(report: dict, options: dict) -> str:
    lines = [doctor_summary(report)]
    lines += [f"{name}: {_fact(value)}" for name, value in report["facts"].items()]
    for level in _LEVELS:
        found = [f for f in report["findings"] if f["level"] == level]
        shown = found if options.get("verbose") else found[:DOCTOR_SHOWN]
        for f in shown:
            where = f"{f['file']}:{f['line']}: " if f["file"] and f["line"] else f"{f['file']}: " if f["file"] else ""
            lines.append(f"{f['level']}: {where}{f['message']} [{f['check']}]")
        if len(found) > len(shown):
            lines.append(f"... and {len(found) - len(shown)} more {level}s (--verbose lists them)")
    return "\n".join(lines)


def model_show(info: dict, options: dict) -> str:
    where = info["path"] or "fastembed's model cache"
    state = f"loads, {info['dimensions']} dimensions" if info["loaded"] else info["error"]
    return f"{info['name']} from {where}\nfingerprint: {info['fingerprint']}\n{state}"


def model_pull(info: dict, options: dict) -> str:
    return f"{info['name']} is in {info['path']}; search and index load it from there"


def model_distill(info: dict, options: dict) -> str:
    return (f"wrote {info['out']}: {info['tokens']:,} tokens x {info['dims']} dimensions in {info['seconds']:.0f} s\n"
            f"use it with ORGKIT_MODEL={info['model']} ORGKIT_MODEL_PATH={info['out']}")


def db_status(info: dict, options: dict) -> str:
    lines = [f"{info['backend']} at {info['location']} (server {info['server']}"
             + (f", {info['vector_extension']} {info['vector']})" if info.get("vector_extension") else ")")]
    for name, schema in info["schemas"].items():
        state = "up to date" if schema["version"] == schema["latest"] else f"latest is {schema['latest']}"
        lines.append(f"{name} schema {schema['version']} ({state})")
    for name, (before, after) in info.get("migrated", {}).items():
        lines.append(f"{name}: migrated from {before} to {after}" if before != after else f"{name}: nothing to do")
    for name, steps in info.get("would_run", {}).items():
        lines.append(f"{name}: would run " + (", ".join(repr(s["name"]) for s in steps) if steps else "nothing"))
    return "\n".join(lines)


def tangle(data: dict, options: dict) -> str:
    if options.get("check"):
        if not data["stale"]:
            return f"{len(data['targets'])} targets up to date"
        return "\n".join(f"stale {r['target']}: {r['reason']}  (from {r['file']})" for r in data["stale"])
    verb = "would write" if options.get("dry_run") else "wrote"
    return "\n".join(
        f"{verb} {r['target']}  {r['bytes']} bytes  mode {r['mode']}  ({r['blocks']} blocks from {r['file']})"
        + ("  [outside the org file's directory]" if r["outside"] else "") for r in data["targets"])


def detangle(data: dict, options: dict) -> str:
    code_file = options["code_file"]
    lines = [f"updated {u['file']}:{u['line']}: {u['block']}" for u in data["updated"]]
    lines += [f"not mapped back {code_file}:{u['line']}: {u['block']}: {u['reason']}" for u in data["unmapped"]]
    lines.append(f"{len(data['updated'])} updated, {data['unchanged']} unchanged, "
                 f"{len(data['unmapped'])} not mapped back")
    return "\n".join(lines)


def skills_list(rows: list[dict], options: dict) -> str:
    return "\n".join(f"{r['name']:<20} {r['priority']:>4}  {r['description']}  ({r['source']})" for r in rows)


def skills_show(info: dict, options: dict) -> str:
    return "\n".join(f"{k}: {v}" for k, v in info.items())


def skills_run(data: dict, options: dict) -> str:
    """A skill's stage for a reader (`--json` gives it whole): the neuro stage's prompt, candidate
    notes one a line with their IDs, read notes as `read` shows them, any other field one line."""
    if data["stage"] == "neuro":
        return data["text"]
    out = []
    for key, value in data.items():
        if key in ("skill", "stage") or value in (None, [], {}):
            continue
        if key == "warnings":
            for message in value:
                warn(message)
        elif key == "candidates":
            out += [f"{c['file']}:{c['line']}: {c['title']}  [{c['id']}]" for c in value]
        elif key == "notes":
            out.append(read(value, options))
        else:
            out.append(f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")
    return "\n".join(out)


def skills_prompt(prompt: dict, options: dict) -> str:
    return prompt["text"]


def ops(rows: list[dict], options: dict) -> str:
    out = []
    for op in rows:
        params = op["parameters"]["properties"]
        required = op["parameters"]["required"]
        shown = " ".join((name.upper() if name in required else f"[{name.upper()}]") if name in op["positional"]
                         else f"[{op['options'][name]}]" for name in params)
        name = " ".join(op["command"]) if op["command"] else f"{op['name']} (serve and MCP only)"
        out.append(f"{name} {shown}".rstrip() + f"{'  (writes)' if op['writes'] else ''}\n"
                   f"    {op['description']}")
    return "\n".join(out)


def config(values: dict, options: dict) -> str:
    """`git config --show-origin` style: origin, kind, key, value (and a refused file value)."""
    width = max(len(v["origin"]) for v in values.values())
    return "\n".join(f"{v['origin']:<{width}}  {v['kind']:<6}  {key} = {json.dumps(v['value'], ensure_ascii=False)}"
                     + (f"  (refused from {v['refused']})" if "refused" in v else "")
                     for key, v in values.items())


def evolve(data: dict, options: dict) -> str:
    lines = []
    for c in data["clusters"]:
        what = f"{c['extractor']} / {c['node_type']} / {c['field']} ({c['source']}, {c['events']} events)"
        if c["status"] == "dropped":
            what += f": dropped by the guardrail ({c['pattern']}): {c['bullet']}"
        elif c["bullet"]:
            what += f": {c['bullet']}"
        lines.append(f"{c['status']:<9} {what}")
    lines.append(f"{data['events']} events -> {data['guidance']}" + ("" if data["written"] else " (unchanged)"))
    lines += [f"scorer of {f['schema']}: fitted on {f['verdicts']} verdicts of {f['documents']} sources "
              f"(fit {f['digest']}, operating point {f['threshold']})" for f in data.get("fits", [])]
    return "\n".join(lines)


def guidance(data: dict, options: dict) -> str:
    lines = [data["file"] + ("" if data["exists"] else " (none yet: `orgkit evolve` writes it)")]
    for part in data["slices"]:
        lines.append(f"{part['extractor']} / {part['node_type']}:")
        lines += [f"  - {b}" for b in part["bullets"]]
    lines += [f"verdicts on {v['schema']}: {v['verdicts']} ({v['accept']} accepted, {v['reject']} rejected) "
              f"on {v['sources']} sources" for v in data.get("verdicts", [])]
    return "\n".join(lines)
def schema_list(rows: list[dict], options: dict) -> str:
    return "\n".join(f"{r['name']:<12} {r['origin']:<9} {', '.join(r['dimensions'])}  ({r['title']})" for r in rows)


def schema_init(schema: dict, options: dict) -> str:
    return (f"wrote {schema['path']}: schema {schema['name']} ({schema['title']})  [{schema['id']}]\n"
            f"  dimensions: {', '.join(schema['dimensions'])}")


def schema_show(schema: dict, options: dict) -> str:
    out = [f"{schema['name']}: {schema['title']}  [{schema['id']}]  grounded: {schema['grounded']}",
           f"  {schema['path']} ({schema['origin']})"]
    for dim in schema["dimensions"]:
        out.append(f"* {dim['name']}  :{dim['tag']}:\n  {' '.join(dim['rubric'].split())}")
    return "\n".join(out)


def extract(result: dict, options: dict) -> str:
    """A planned run prints its task graph; a run prints its claims and the audit in brief."""
    if "tasks" in result:
        return json.dumps(result, indent=2, ensure_ascii=False)
    if "sources" in result and "claims" not in result:
        return explained(result)
    from ..llm import format_prompt

    out = [format_prompt(p["role"], p["model"], p["messages"]) for p in result.get("prompts", [])]
    for claim in result["claims"]:
        quote = " ".join(claim["quote"].split())
        score = f" ({claim['score']:.2f})" if isinstance(claim.get("score"), (int, float)) else ""
        out.append(f"{claim['source']}:{claim['start']}-{claim['end']}: [{claim['dimension']}]{score} "
                   f"{quote[:100]}  [{claim['claim_id']}]")
    audit = result["audit"]
    out.append(f"run {result['run']}: {audit['quotes']} quote(s), {audit['verified']} verified, "
               f"{audit['dropped']} dropped (not in the source), {audit['rejected']} rejected, "
               f"{len(audit['flags'])} flagged, {len(audit['failed'])} failed task(s)")
    return "\n".join(out)


def extract_learn(result: dict, options: dict) -> str:
    fit = result["fit"]
    return (f"{result['file']}: {result['verdicts']} verdicts ({result['accept']} accept, {result['reject']} reject; "
            f"{result['new']} new) on {result['sources']} sources under {result['schema']}\n"
            f"scorer refitted on {fit['verdicts']} verdicts of {fit['documents']} sources (fit {fit['digest']}, "
            f"operating point {fit['threshold']})")


def explained(result: dict) -> str:
    """Per unit, its best dimension: taken or not, the score against the bar, and the features that
    weighed most (feature value x weight)."""
    fit = result["fit"]
    caps = ", ".join(f"{name} {cap}" for name, cap in fit.get("caps", {}).items())
    out = [f"schema {result['schema']}: fit {fit['digest']} ({fit['verdicts']} verdicts), "
           f"a claim needs {result['min_score']:.2f}" + (f"; claims a document gives at most: {caps}" if caps else "")]
    for source in result["sources"]:
        best: dict[tuple[int, int], dict] = {}
        for row in source["units"]:
            key = (row["start"], row["end"])
            if key not in best or row["score"] > best[key]["score"]:
                best[key] = row
        out.append(f"{source['source']}:")
        for row in sorted(best.values(), key=lambda r: r["start"]):
            parts = sorted(((name, value * row["weights"][name]) for name, value in row["features"].items()),
                           key=lambda nv: -abs(nv[1]))
            why = ", ".join(f"{name} {weight:+.2f}" for name, weight in parts[:4] if weight)
            quote = " ".join(row["quote"].split())[:70]
            out.append(f"  {'taken' if row['taken'] else 'left '} {row['score']:.2f} [{row['dimension']}] {quote}"
                       f"\n        bias {row['bias']:+.2f}; {why or 'no feature weighs'}")
    return "\n".join(out)


def audit(report: dict, options: dict) -> str:
    out = [f"{r['run']} {r['source']}: {r['verified']} verified, {r['reanchored']} re-anchored, "
           f"{r['stale']} stale, {r['missing']} missing" for r in report["sources"]]
    out.append(f"{report['quotes']} quote(s) in {len(report['runs'])} run(s): {report['verified']} verified, "
               f"{report['reanchored']} re-anchored, {report['stale']} stale, {report['missing']} missing")
    return "\n".join(out)


def _token(t: dict) -> str:
    state = f"revoked {t['revoked']}" if t.get("revoked") else "active"
    return f"{t['name']}  {t['role']:<8}  created {t['created']}  {state}"


def token_add(t: dict, options: dict) -> str:
    return t["token"]  # alone on stdout, for `TOKEN=$(orgkit token add ...)`; the warning says the rest


def token_list(rows: list[dict], options: dict) -> str:
    return "\n".join(_token(t) for t in rows) or "no tokens"


def token_revoke(t: dict, options: dict) -> str:
    return _token(t)


RENDERERS: dict[str, Callable[[Any, dict], str]] = {
    "nodes": nodes, "links": links, "backlinks": backlinks, "scan": scan, "read": read, "index": index,
    "search": search, "recent": recent, "context": context, "new": new, "id_add": id_add, "doctor": doctor,
    "model_show": model_show, "model_pull": model_pull,
    "model_distill": model_distill, "db_status": db_status, "db_migrate": db_status, "tangle": tangle,
    "detangle": detangle, "skills_list": skills_list, "skills_show": skills_show, "skills_run": skills_run,
    "skills_prompt": skills_prompt, "ops": ops, "config": config, "evolve": evolve, "guidance": guidance,
    "schema_list": schema_list, "schema_init": schema_init, "schema_show": schema_show, "extract": extract,
    "extract_learn": extract_learn,
    "audit": audit, "token_add": token_add, "token_list": token_list, "token_revoke": token_revoke,
    **MEMORY_RENDERERS,
}

"""External agents playing the roles: `extract --plan` hands out the work, `extract --commit` takes it back.

The plan is the run's task graph after the tool-side preparation (sources
ingested, source and hub notes written), with each task's context: for the
extractor, the schema's rubric, the persona, the reply format and the source
text (and its chunks when long). An agent answers with candidates; `commit`
runs them through the same grounding, scribe and audit as a local run, so an
agent's quote that is not in the source is dropped like a model's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Collection

from ..config import Config
from ..errors import OrgkitError
from ..llm import persona
from . import run as runs
from .model import CANDIDATES_SCHEMA, chunks, rubric_text
from .sources import read_copy
from .store import check_run_id


def plan(config: Config, given: list[str], schema_spec: str, waiting: Collection[str],
         feedback: bool = False) -> dict:
    """The prepared run's task graph (`waiting`: `runs.prepare`'s); with `feedback`, the
    extractor's persona carries its guidance."""
    ctx = runs.prepare(config, given, schema_spec, waiting)
    if feedback:
        runs.use_feedback(ctx)
    info = ctx.store.read("run.json")
    tasks = []
    for i, source in enumerate(info["sources"]):
        text = read_copy(Path(source["copy"]))
        pieces = chunks(text)
        tasks.append({"id": f"extract:{i}", "role": "extractor", "source": source["given"], "depends_on": [],
                      "context": {"source_id": source["source_id"], "hub_id": source["hub_id"],
                                  "persona": persona(config, "extractor") + ctx.guidance,
                                  "rubric": rubric_text(ctx.schema),
                                  "reply_format": CANDIDATES_SCHEMA, "text": text,
                                  "chunks": pieces if len(pieces) > 1 else []}})
        tasks.append({"id": f"scribe:{i}", "role": "scribe", "source": source["given"],
                      "depends_on": [f"extract:{i}"], "context": {"how": "orgkit extract --commit CANDIDATES.json"}})
        tasks.append({"id": f"audit:{i}", "role": "auditor", "source": source["given"],
                      "depends_on": [f"scribe:{i}"], "context": {"how": f"orgkit audit {ctx.store.run}"}})
    tasks.append({"id": "run-note", "role": "scribe", "source": None,
                  "depends_on": [f"audit:{i}" for i in range(len(info["sources"]))], "context": {}})
    states = ctx.store.tasks()
    for task in tasks:
        task["state"] = states.get(task["id"], {}).get("state", "pending")
    return {"run": ctx.store.run, "schema": ctx.schema.to_json(), "tasks": tasks,
            "commit_format": {"run": ctx.store.run,
                              "candidates": [{"source": "SOURCE as given", "dimension": "NAME",
                                              "claim": "...", "quote": "verbatim text"}]}}


def read_candidates(path: Path) -> tuple[str, list[dict]]:
    """(run, candidates) from a commit file, or a one-line error saying what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise OrgkitError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise OrgkitError(f"{path}: not JSON: {exc}") from None
    except RecursionError:
        raise OrgkitError(f"{path}: not JSON this program reads: nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("run"), str) \
            or not isinstance(data.get("candidates"), list):
        raise OrgkitError(f"{path}: expected {{\"run\": RUN, \"candidates\": [...]}}")
    for n, cand in enumerate(data["candidates"]):
        if not isinstance(cand, dict) or not all(isinstance(cand.get(k), str)
                                                 for k in ("source", "dimension", "claim", "quote")):
            raise OrgkitError(f"{path}: candidate {n} needs string fields source, dimension, claim, quote")
    return check_run_id(data["run"], f"{path}: run"), data["candidates"]


def commit(config: Config, path: Path) -> dict:
    run, candidates = read_candidates(path)
    ctx = runs.open_run(config, run)
    sources = ctx.store.read("run.json")["sources"]
    if all(ctx.store.state(f"extract:{i}") == "done" for i in range(len(sources))):
        written = sum(len(ctx.store.read(f"claims-{i}.json", {"claims": []})["claims"]) for i in range(len(sources)))
        raise OrgkitError(f"run {run} was committed already ({written} claim(s) written then); nothing done: "
                          f"plan a new run (orgkit extract SOURCE... --plan) to commit other candidates")
    known = {s["given"] for s in sources} | {s["path"] for s in sources} | {s["sha256"] for s in sources}
    strays = sorted({c["source"] for c in candidates if c["source"] not in known})
    if strays:
        raise OrgkitError(f"{path}: source {strays[0]!r} is not part of run {run}")

    def for_source(index: int, source: dict, text: str) -> list[dict]:
        names = {source["given"], source["path"], source["sha256"]}
        return [c for c in candidates if c["source"] in names]

    return runs.execute(ctx, candidates_for=for_source)

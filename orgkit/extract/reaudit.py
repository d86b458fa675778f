"""`orgkit audit`: re-verify finished runs against their sources as they are now."""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..confine import inside
from .audit import verify_source
from .run import dimension_tags, open_run, rewrite_hub
from .store import list_runs


def audit_runs(config: Config, runs: list[str] | None, originals: list[Path] | None = None) -> dict:
    """Every quote of the runs (all when None) checked; changed sources re-anchored or marked stale.

    With `originals` (a server's client asks), an original source is re-read
    only when it lies in one of those directories: a run file never makes
    orgkit read a file of an agent's choosing.
    """
    names = runs if runs is not None else list_runs(config.data_dir)
    rows, problems = [], []
    for name in names:
        ctx = open_run(config, name)
        sources = ctx.store.read("run.json")["sources"]
        tags = dimension_tags(ctx.schema)
        for i, source in enumerate(sources):
            written = ctx.store.read(f"claims-{i}.json")
            if written is None:
                continue
            follow = originals is None or inside(Path(source["path"]), *originals)
            if not follow:
                problems.append(f"{source['given']}: the original is outside the notes dir; checked against "
                                "its copy only")
            before = [dict(c) for c in written["claims"]]
            report = verify_source(config.notes, config.data_dir, source, written["claims"], tags, reanchor=follow)
            if written["claims"] != before:  # moved or lost quotes: the run's record and the hub follow
                ctx.store.write(f"claims-{i}.json", written)
                rewrite_hub(ctx, i)
            problems += report.pop("problems")
            rows.append({"run": name, **report})
    totals = {k: sum(r[k] for r in rows) for k in ("quotes", "verified", "reanchored", "stale", "missing")}
    return {"runs": names, **totals, "sources": rows, "problems": problems}

"""A run's task graph and state, kept in the data dir so a crashed run can resume.

`DATA/extract/runs/RUN/` holds `run.json` (the schema used, the sources with
their note IDs), `tasks.json` (each task's state: pending, done or failed,
with the error) and one JSON file per finished task's output (candidates,
written claims, audit). Every file is replaced whole, so a kill at any
moment leaves the last complete state; tasks already done are not redone.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..confine import inside
from ..errors import NotFound, OrgkitError
from ..files import made_dir, replace_file


# A run ID is an ID, never a path: it is joined under the runs folder only when it matches this.
RUN_ID = r"[0-9A-Za-z][0-9A-Za-z_-]{0,63}"


def runs_dir(data_dir: Path) -> Path:
    return data_dir / "extract" / "runs"


def check_run_id(run: object, where: str = "run") -> str:
    """`run` when it is a run ID; a one-line error otherwise (a path, `..`, an empty or a long value)."""
    if not isinstance(run, str) or not re.fullmatch(RUN_ID, run):
        shown = repr(run)[:80]
        raise OrgkitError(f"{where} {shown} is not a run ID (letters, digits, '-' and '_', as `extract` printed it)")
    return run


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass
class RunStore:
    """The files of one run, with a lock so concurrent tasks update state one at a time."""

    root: Path
    run: str
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def create(cls, data_dir: Path, run: str) -> "RunStore":
        root = runs_dir(data_dir) / check_run_id(run)
        made_dir(root)
        return cls(root, run)

    @classmethod
    def open(cls, data_dir: Path, run: str) -> "RunStore":
        root = runs_dir(data_dir) / check_run_id(run)
        if not (root / "run.json").is_file():
            raise NotFound(f"no extraction run {run!r} in {runs_dir(data_dir)}")
        return cls(root, run)

    def read(self, name: str, default: Any = None) -> Any:
        path = self.root / name
        if not path.is_file():
            return default
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as exc:
            raise OrgkitError(f"{path}: not a readable run file ({type(exc).__name__})") from None
        shape = SHAPES.get(name)
        why = shape(data) if shape is not None else None
        if why is not None:
            raise OrgkitError(f"run {self.run}: its {name} is malformed ({why}); refused and left as it is")
        return data

    def write(self, name: str, data: Any) -> None:
        replace_file(self.root / name, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))

    def write_text(self, name: str, text: str) -> None:
        replace_file(self.root / name, text.encode("utf-8"))

    def tasks(self) -> dict[str, dict]:
        return self.read("tasks.json", {})

    def set_task(self, task: str, state: str, error: str | None = None) -> None:
        with self._lock:
            tasks = self.tasks()
            entry = tasks.setdefault(task, {})
            entry["state"] = state
            if error is None:
                entry.pop("error", None)
            else:
                entry["error"] = error
            self.write("tasks.json", tasks)

    def state(self, task: str) -> str:
        return self.tasks().get(task, {}).get("state", "pending")


def _run_shape(data: Any) -> str | None:
    """Why a run.json is not one orgkit wrote (None when it is): what every reader of it relies on."""
    if not isinstance(data, dict):
        return "not an object"
    schema, sources = data.get("schema"), data.get("sources")
    if not isinstance(schema, dict) or not all(isinstance(schema.get(k), str) for k in ("name", "path")):
        return "its schema is not {name, path}"
    if not isinstance(sources, list) or not all(isinstance(s, dict) for s in sources):
        return "its sources are not a list of objects"
    for n, source in enumerate(sources):
        wrong = [k for k in SOURCE_TEXTS if not isinstance(source.get(k), str)]
        if wrong:
            return f"source {n}: {', '.join(wrong)} not text"
        if not isinstance(source.get("supersedes"), (dict, type(None))):
            return f"source {n}: supersedes is neither an object nor null"
    return None


def _tasks_shape(data: Any) -> str | None:
    """Why a tasks.json is not one orgkit wrote (None when it is)."""
    if not isinstance(data, dict) or not all(isinstance(t, dict) and isinstance(t.get("state", ""), str)
                                             for t in data.values()):
        return "not an object of tasks, each with its state"
    return None


SOURCE_TEXTS = ("given", "path", "name", "sha256", "fmt", "copy", "source_id", "source_note", "hub_id", "hub_note")
# What a run's files must look like before anything reads them: they travel with the notes.
SHAPES = {"run.json": _run_shape, "tasks.json": _tasks_shape}


def claim_note(notes: Path, claim: dict) -> Path | None:
    """The file of a claim's note as its run recorded it (`claim_file`), or None when that is not
    a relative path inside the notes: a run's files are data that may come with the notes, so
    what they name is checked before orgkit writes there, as an agent's path is."""
    rel = claim.get("claim_file")
    if not isinstance(rel, str) or not rel or Path(rel).is_absolute() or not inside(notes / rel, notes):
        return None
    return notes / rel


def refused_claim(run: str, claim: dict) -> str:
    """The one line naming a claim whose recorded file `claim_note` refused."""
    return (f"run {run}: claim {str(claim.get('claim_id'))[:80]!r}: its file {str(claim.get('claim_file'))[:200]!r} "
            "is outside the notes dir; refused and left as it is")


def list_runs(data_dir: Path) -> list[str]:
    folder = runs_dir(data_dir)
    return sorted(p.name for p in folder.iterdir() if (p / "run.json").is_file()) if folder.is_dir() else []

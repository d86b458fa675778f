"""`orgkit doctor`: what is wrong with the set-up and with the notes.

Each finding names a file and line where there is one. Errors are things that
lose or hide data (unreadable files, duplicate IDs, links to missing notes);
warnings degrade a feature (no ripgrep, no model); infos are worth a look
(notes that nothing links to).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

from .diagnosis import Check, Report, Setup
from .embed import ModelUnavailable
from .errors import OrgkitError
from .index.store import Index
from .rg import environment, find_rg
from .vault import Vault, iter_org_files, require_dir



def check_ripgrep(setup: Setup, report: Report) -> None:
    rg = find_rg()
    if rg is None:
        report.facts["rg"] = None
        report.add("warning", "rg", "ripgrep (rg) not found: scan and read use a slower "
                   "pure-Python search (pip install ripgrep, or put rg on PATH)")
        return
    try:
        out = subprocess.run([rg, "--version"], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL, env=environment())
        version = out.stdout.splitlines()[0] if out.stdout else "unknown version"
    except (OSError, subprocess.SubprocessError) as exc:
        report.facts["rg"] = {"path": rg}
        report.add("error", "rg", f"ripgrep at {rg} does not run: {exc}")
        return
    report.facts["rg"] = {"path": rg, "version": version}


def check_notes(setup: Setup, report: Report) -> None:
    """Read every file as a full load would, and look at the graph it makes."""
    outside: list[tuple[str, str]] = []
    attachments: list[str] = []
    vault = Vault.load(setup.root, list(iter_org_files(setup.root, outside, attachments)))
    for rel, target in outside:
        report.add("warning", "symlink", f"a symlink to {target}, outside the notes: not followed "
                   "(notes.follow_roots in your own config adds a root)", rel)
    for rel in attachments:
        report.add("warning", "attachment", "an org file whose path holds data/, where Org keeps attachments: "
                   "left out, as org-roam leaves it out", rel)
    for rel, why in vault.skipped:
        report.add("error", "parse", why.removeprefix(f"{rel}: "), rel)
    for parsed in vault.files:
        for warning in parsed.warnings:
            report.add("warning", "parse", warning.message, warning.file, warning.line)
    for node_id, holders in _duplicates(setup, vault).items():
        kept = holders[0]
        for other in holders[1:]:
            report.add("error", "duplicate-id", f"ID {node_id} also at {kept.file}:{kept.line} "
                       "(the node read by this ID)", other.file, other.line)
    linked: set[str] = set()
    for link in vault.links:
        if link.type != "id":
            continue
        linked.add(link.dest)
        if link.dest not in vault.by_id:
            if _is_hub(vault.by_id.get(link.source)):  # a claim the person deleted: not broken by them
                report.add("info", "deleted-claim", f"extraction hub still lists deleted claim {link.dest}; "
                           "`orgkit index` takes it off", link.file, link.line)
                continue
            report.add("error", "broken-link", f"id link to missing note {link.dest}",
                       link.file, link.line)
    for node in vault.nodes:
        if node.level == 0 and node.id not in linked:
            report.add("info", "orphan", f"nothing links to {node.title!r}", node.file, node.line)
    report.facts["notes"] = {"files": len(vault.files), "nodes": len(vault.nodes),
                             "links": len(vault.links)}


def _is_hub(node) -> bool:
    """Whether `node` is an extraction run's hub (its claim links follow the claim notes)."""
    return node is not None and "extraction" in node.tags and "RUN" in node.properties and "SOURCE" in node.properties


def check_temporaries(setup: Setup, report: Report) -> None:
    """Temporary files of note writes that were killed before their rename: each holds a
    whole note (mode 0600); the next write in that directory removes them."""
    from .org.write import TEMPORARY, TEMPORARY_PREFIX

    for directory, subdirs, names in os.walk(setup.root):
        subdirs[:] = sorted(d for d in subdirs if d not in (".git", ".orgkit"))
        for name in sorted(names):
            if name.startswith(TEMPORARY_PREFIX) and TEMPORARY.fullmatch(name):
                rel = Path(directory, name).relative_to(setup.root).as_posix()
                report.add("warning", "temporary-file", "left by a note write that was interrupted "
                           "(the next write in this folder removes it)", rel)


def _duplicates(setup: Setup, vault: Vault) -> dict[str, list]:
    """Each duplicate ID's nodes, the one its reads return first: the index's first-seen
    order when there is an index, else the vault's (the file modified earlier)."""
    groups: dict[str, list] = {}
    for kept, other in vault.duplicates:
        groups.setdefault(kept.id, [kept]).append(other)
    index = Index.at(setup.root, setup.state_dir, setup.database)
    if groups and index.exists():
        try:
            order = index.locate(sorted(groups))
        finally:
            index.close()
        for node_id, nodes in groups.items():
            files = order.get(node_id, [])
            nodes.sort(key=lambda n: (files.index(n.file) if n.file in files else len(files), n.line))
    return groups


def check_model(setup: Setup, report: Report) -> None:
    """Load the embedding model as search would; without one, search ranks by words."""
    embedder = setup.model()
    fact: dict[str, object] = {"name": embedder.name,
                               "path": str(embedder.path) if embedder.path else None}
    started = time.perf_counter()
    try:
        embedder.load()
        fact["loaded_in_seconds"] = round(time.perf_counter() - started, 2)
    except ModelUnavailable as exc:
        report.add("warning", "model", f"{exc}; search and context rank by words only")
        fact["error"] = str(exc)
    report.facts["model"] = fact


def check_database(setup: Setup, report: Report) -> None:
    """With database.url set: whether the server answers, has pgvector, and holds an index."""
    if setup.database is None:
        return
    index = Index.at(setup.root, setup.state_dir, setup.database)
    try:
        status = index.backend.status(index)
    except OrgkitError as exc:
        report.facts["database"] = {"error": str(exc)}
        report.add("error", "database", str(exc))
        return
    report.facts["database"] = status
    if status["vector"] is None:
        report.add("error", "database", "the server has no pgvector extension; install pgvector 0.5 or later "
                   "(https://github.com/pgvector/pgvector), then run `orgkit db migrate`")
    elif status["vector"].startswith("available"):
        report.add("warning", "database", "pgvector is available but not installed in the database: "
                   "`orgkit db migrate` installs it (it needs the right to CREATE EXTENSION)")


def check_index(setup: Setup, report: Report) -> None:
    """Whether the index exists and matches the files (read-only: nothing is updated)."""
    index = Index.at(setup.root, setup.state_dir, setup.database)
    if setup.database is not None:
        database = report.facts.get("database") or {}
        if "schemas" not in database or database["schemas"]["index"]["version"] == 0:
            report.facts["index"] = None
            if "schemas" in database:
                report.add("warning", "index", "no index in the database yet: run `orgkit index`")
            return
    elif not index.exists():
        report.facts["index"] = None
        report.add("warning", "index", f"no index at {index.path}: run `orgkit index` "
                   "(search, context and serve need it)")
        return
    model = report.facts.get("model")
    known = index.file_states()
    passages, embedded = index.passage_counts(
        setup.model().fingerprint if isinstance(model, dict) and "error" not in model else None)
    index.close()
    on_disk = set()
    for rel in iter_org_files(setup.root):
        on_disk.add(rel)
        st = (setup.root / rel).stat()
        if rel not in known:
            report.add("warning", "index", "not in the index yet", rel)
        elif not _indexed_as_is(setup.root / rel, st, *known[rel]):
            report.add("warning", "index", "changed since it was indexed", rel)
    for rel in sorted(set(known) - on_disk):
        report.add("warning", "index", "indexed but no longer there", rel)
    where = str(index.path) if setup.database is None else report.facts["database"]["location"]
    report.facts["index"] = {"path": where, "files": len(known),
                             "passages": passages, "embedded": embedded}
    if embedded is not None and embedded < passages:
        report.add("warning", "index", f"{passages - embedded} of {passages} passages have no "
                   "vector from this model: run `orgkit index`")


def _indexed_as_is(path: Path, st: os.stat_result, size: int, mtime_ns: int, digest: str) -> bool:
    """Size and time as indexed; a file indexed moments after a write is compared by content."""
    if st.st_size != size:
        return False
    if mtime_ns == st.st_mtime_ns:
        return True
    return mtime_ns < 0 and hashlib.sha1(path.read_bytes()).hexdigest() == digest


def check_memory(setup: Setup, report: Report) -> None:
    """Deposits with their audit records, accepted proposals with their notes."""
    from .memory.health import check_memory as check

    check(setup, report)


CHECKS: list[Check] = [check_ripgrep, check_notes, check_temporaries, check_model, check_database, check_index,
                       check_memory]


def diagnose(setup: Setup, checks: list[Check] | None = None) -> Report:
    require_dir(setup.root)
    report = Report()
    for check in checks if checks is not None else CHECKS:
        check(setup, report)
    return report

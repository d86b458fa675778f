"""`orgkit evolve`: clusters of correction events become guidance bullets.

Events cluster by (extractor, node type, field, source), never by node or
document, so guidance generalises across documents and survives renames. An
override superseded by a later one on the same node and field (the user edited
the same note twice) counts once, as its latest event. A cluster with at least
`feedback.min_events` members earns one bullet: phrased by the model seam (role
`guidance`) and cached by the hash of the cluster's members, so an unchanged
cluster makes no model call on a re-run; with no model, a deterministic
template, written only when it can say something concrete (what the edits did,
with two real before/after pairs; else the cluster is `vague`). The guardrail drops bullets that
teach saying less. Bullets are merged into the guidance file, respecting the user's edits and deletions.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from ..config import Config
from ..files import replace_file
from ..index.embedding import EmbedProgress, Progress
from ..org.write import atomic_write
from ..locator import note_ids
from .events import Event, load_events, sha256
from .fields import normalized
from .guardrail import offending, patterns
from .guidance import ClusterRef, Entry, read_guidance, render
from .paths import bullet_cache_path, guidance_path

TEMPLATE = "template"
_EXAMPLE_CHARS = 160
BULLET_SCHEMA = {"type": "object", "properties": {"bullet": {"type": "string", "minLength": 1}},
                 "required": ["bullet"], "additionalProperties": False}
@dataclass(frozen=True)
class ClusterKey:
    extractor: str
    node_type: str
    field: str
    source: str


@dataclass
class Cluster:
    key: ClusterKey
    members: list[Event]

    @property
    def hash(self) -> str:
        """The membership hash: sha256 of the sorted member event IDs, one a line."""
        return sha256("\n".join(sorted(e.id for e in self.members)))

    def ref(self) -> ClusterRef:
        return ClusterRef(self.hash, self.key.source, self.key.field, len(self.members))


@dataclass
class ClusterReport:
    cluster: Cluster
    status: str  # below_min, vague (no two real examples), new, updated, unchanged, edited, deleted, dropped
    bullet: str | None = None
    by: str | None = None  # model name, "template", or None when nothing was phrased
    pattern: str | None = None  # the guardrail pattern a dropped bullet matched

    def to_json(self) -> dict:
        key = self.cluster.key
        return {"extractor": key.extractor, "node_type": key.node_type, "field": key.field,
                "source": key.source, "events": len(self.cluster.members), "hash": f"sha256:{self.cluster.hash}",
                "status": self.status, "bullet": self.bullet, "by": self.by, "pattern": self.pattern}


@dataclass
class EvolveResult:
    guidance: str
    events: int
    clusters: list[ClusterReport] = field(default_factory=list)
    model_calls: int = 0
    model_note: str | None = None  # why no model phrased the bullets
    warnings: list[str] = field(default_factory=list)
    written: bool = False

    def to_json(self) -> dict:
        return {"guidance": self.guidance, "events": self.events, "written": self.written,
                "clusters": [c.to_json() for c in self.clusters],
                "dropped": [c.to_json() for c in self.clusters if c.status == "dropped"],
                "model_calls": self.model_calls, "model_note": self.model_note, "warnings": self.warnings}


def cluster_events(events: list[Event]) -> list[Cluster]:
    """Events grouped by (extractor, node type, field, source), in a stable order."""
    latest: dict[tuple, Event] = {}
    for event in events:
        if event.source == "override":
            ident: tuple = ("override", event.source_path, event.node_id, event.field)
        else:
            ident = (event.id,)
        latest[ident] = event  # a later override of the same field replaces the earlier one
    groups: dict[ClusterKey, list[Event]] = {}
    for event in latest.values():
        key = ClusterKey(event.extractor, event.node_type, event.field, event.source)
        groups.setdefault(key, []).append(event)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0].extractor, kv[0].node_type, kv[0].source, kv[0].field))
    return [Cluster(key, sorted(members, key=lambda e: (e.time, e.id))) for key, members in ordered]


def _clip(value) -> str:
    text = normalized(value)
    return text if len(text) <= _EXAMPLE_CHARS else text[:_EXAMPLE_CHARS - 1].rstrip() + "…"


def changed_words(before, after) -> tuple[str, str]:
    """The part of a text that an edit changed: words left after removing the common
    beginning and end (one word of context kept when a side would be empty)."""
    a, b = normalized(before).split(), normalized(after).split()
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and a[-1 - j] == b[-1 - j]:
        j += 1
    if i > 0 and (i == len(a) - j or i == len(b) - j):
        i -= 1
    return " ".join(a[i:len(a) - j]), " ".join(b[i:len(b) - j])


def template_bullet(cluster: Cluster, dimensions: dict[str, str] | None = None) -> str | None:
    """A deterministic bullet built from the cluster alone (no model), or None when the cluster
    gives nothing concrete to say: fewer than two real examples (an accept that changed nothing,
    "X became X", is no example). `dimensions` maps claim IDs to their dimension, so a pattern
    confined to one dimension can say so."""
    key, members = cluster.key, cluster.members
    n = len(members)
    docs = len({e.source_path for e in members})
    actions = Counter(e.action for e in members)
    counts = ", ".join(f"{actions[a]} {a}" + ("ed" if not a.endswith("e") else "d") for a in sorted(actions))
    where = f"from {docs} document{'s' if docs != 1 else ''}"
    under = _common_dimension(members, dimensions or {})
    if key.source == "link_change":
        targets = _distinct(e.target_slug or _clip(e.after or e.before) for e in reversed(members))
        if len(targets) < 2:
            return None
        return (f"People changed the links of {n} generated {key.node_type} notes{under} {where} ({counts}), for "
                f"example links to “{targets[0]}” and “{targets[1]}”. Link {key.node_type} notes the way these "
                f"corrections do.")
    if key.field == "note" and key.source == "override":
        titles = _distinct(_clip(e.before) for e in reversed(members) if normalized(e.before))
        if len(titles) < 2:
            return None
        return (f"People deleted {n} generated {key.node_type} notes{under} {where}, for example “{titles[0]}” "
                f"and “{titles[1]}”. Check that each {key.node_type} states what its source says before "
                f"writing it.")
    pairs = _distinct(changed_words(e.before, e.after) for e in reversed(members)
                      if normalized(e.before) != normalized(e.after))
    if len(pairs) < 2:
        return None
    examples = " and ".join(f"“{_clip(was)}” became “{_clip(now)}”" for was, now in pairs[:2])
    if key.source == "review":
        return (f"Reviewers decided on {n} proposed {key.node_type} notes {where} ({counts}); {_trend(pairs)}, "
                f"for example {examples}. Propose notes the way the accepted and edited ones read.")
    return (f"People corrected the {key.field} of {n} generated {key.node_type} notes{under} {where} ({counts}); "
            f"{_trend(pairs)}, for example {examples}. Write the {key.field} the way these corrections do.")


def _distinct(values) -> list:
    """The values in order, each once, empty ones left out."""
    out: list = []
    for value in values:
        if value and value not in out:
            out.append(value)
    return out


def _trend(pairs: list[tuple[str, str]]) -> str:
    """What the edits did to the changed words, when they all did the same."""
    grew = [len(now.split()) - len(was.split()) for was, now in pairs]
    if all(g < 0 for g in grew):
        return "each edit made the text shorter"
    if all(g > 0 for g in grew):
        return "each edit added words"
    return "the edits reworded the text"


def _common_dimension(members: list[Event], dimensions: dict[str, str]) -> str:
    """" under DIMENSION" when most of the corrected notes are claims of one dimension, else ""."""
    found = Counter(dimensions[e.node_id] for e in members if e.node_id in dimensions)
    if not found:
        return ""
    name, count = found.most_common(1)[0]
    return f" under {name}" if 2 * count > len(members) else ""


def _cluster_prompt(cluster: Cluster) -> str:
    key = cluster.key
    lines = [f"Extractor: {key.extractor}", f"Node type: {key.node_type}", f"Field: {key.field}",
             f"Kind of correction: {key.source}", f"Corrections ({len(cluster.members)}):"]
    for event in cluster.members[-12:]:
        lines.append(json.dumps({"action": event.action, "before": _clip(event.before), "after": _clip(event.after),
                                 **({"target": event.target_slug} if event.target_slug else {})},
                                ensure_ascii=False))
    return "\n".join(lines)


class _Phraser:
    """Bullets for clusters: from the cache, the model seam, or the template."""

    def __init__(self, config: Config, result: EvolveResult, dimensions: dict[str, str]) -> None:
        self.config = config
        self.result = result
        self.cache = _read_cache(config)
        self.dirty = False
        self.no_model = False
        self.dimensions = dimensions

    def generated(self, membership: str) -> str | None:
        """The bullet evolve wrote for a membership hash, if it remembers one."""
        entry = self.cache.get(membership)
        return entry.get("bullet") if isinstance(entry, dict) else None

    def phrase(self, cluster: Cluster) -> tuple[str | None, str]:
        cached = self.cache.get(cluster.hash)
        if isinstance(cached, dict) and cached.get("bullet") and cached.get("by") != TEMPLATE:
            return cached["bullet"], cached["by"]
        text, by = self._from_model(cluster) if not self.no_model else (None, TEMPLATE)
        if text is None:
            text, by = template_bullet(cluster, self.dimensions), TEMPLATE
            if text is None:
                return None, TEMPLATE
        self.cache[cluster.hash] = {"bullet": text, "by": by}
        self.dirty = True
        return text, by

    def _from_model(self, cluster: Cluster) -> tuple[str | None, str]:
        from ..llm import ModelFailure, ModelUnavailable, complete, persona

        messages = [{"role": "system", "content": persona(self.config, "guidance")},
                    {"role": "user", "content": _cluster_prompt(cluster)}]
        try:
            self.result.model_calls += 1
            reply = complete(self.config, "guidance", messages, json_schema=BULLET_SCHEMA)
        except ModelUnavailable as exc:
            self.result.model_calls -= 1
            self.no_model = True
            self.result.model_note = f"{exc}; template bullets written"
            return None, TEMPLATE
        except ModelFailure as exc:
            self.result.warnings.append(f"guidance model failed ({exc}); template bullet for "
                                        f"{cluster.key.extractor}/{cluster.key.node_type}/{cluster.key.field}")
            return None, TEMPLATE
        bullet = " ".join(str(reply.data["bullet"]).split()).lstrip("-+ ")
        return (bullet, reply.model or "model") if bullet else (None, TEMPLATE)

    def save(self) -> None:
        if self.dirty:
            replace_file(bullet_cache_path(self.config),
                         json.dumps(self.cache, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8"))


def evolve(config: Config, dimensions: dict[str, str] | None = None,
           progress: Progress | None = None) -> EvolveResult:
    """Distil the recorded events into the guidance file; what happened to each cluster.

    `dimensions` maps extracted claims' IDs to their dimensions (bullets name the
    dimension a pattern of corrections lives in). `progress` hears of each cluster
    decided (phrasing one may wait for the model)."""
    events = load_events(config)
    path = guidance_path(config)
    result = EvolveResult(guidance=_display(config, path), events=len(events))
    doc, before = read_guidance(config)
    guard = patterns(config)
    phraser = _Phraser(config, result, dimensions or {})
    minimum = config["feedback.min_events"]
    clusters = cluster_events(events)
    for done, cluster in enumerate(clusters, 1):
        if progress is not None:
            progress(EmbedProgress(done - 1, len(clusters), unit="clusters of corrections", what="evolving"))
        if len(cluster.members) < minimum:
            result.clusters.append(ClusterReport(cluster, "below_min"))
            continue
        key = cluster.key
        entry = doc.entry(key.extractor, key.node_type, key.source, key.field)
        report = _merge(cluster, entry, phraser, guard)
        if report.status == "new":
            new = Entry(None)
            new.set_cluster(cluster.ref())
            new.set_bullet(report.bullet)
            doc.new_section(key.extractor, key.node_type).items.append(new)
        elif report.status == "dropped" and entry is not None and entry.bullet is not None:
            section = doc.section(key.extractor, key.node_type)
            if section is not None:  # the entry came from this section
                section.items.remove(entry)
        result.clusters.append(report)
    if progress is not None and clusters:
        progress(EmbedProgress(len(clusters), len(clusters), unit="clusters of corrections", what="evolving"))
    phraser.save()
    text = render(doc).encode("utf-8")
    if text != before and (before is not None or doc.extractors):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text, expected=before, ids=note_ids(config.notes))
        result.written = True
    return result


def _merge(cluster: Cluster, entry: Entry | None, phraser: _Phraser, guard) -> ClusterReport:
    """Decide one cluster's bullet against what the file holds for it (changing `entry` in place)."""
    if entry is not None and entry.cluster is not None:
        same = entry.cluster.hash == cluster.hash
        current = entry.bullet
        if current is None and same:
            return ClusterReport(cluster, "deleted")
        if current is not None:
            written = phraser.generated(entry.cluster.hash)
            if written is None or normalized(written) != normalized(current):
                entry.set_cluster(cluster.ref())
                return ClusterReport(cluster, "edited", current)
    bullet, by = phraser.phrase(cluster)
    if bullet is None:
        return ClusterReport(cluster, "vague")  # nothing concrete to say: no bullet
    bad = offending(bullet, guard)
    if bad is not None:
        return ClusterReport(cluster, "dropped", bullet, by, bad)
    if entry is None:
        return ClusterReport(cluster, "new", bullet, by)
    if entry.bullet is not None and normalized(entry.bullet) == normalized(bullet) \
            and entry.cluster is not None and entry.cluster.hash == cluster.hash:
        return ClusterReport(cluster, "unchanged", entry.bullet, by)  # left exactly as it is written
    entry.set_cluster(cluster.ref())
    entry.set_bullet(bullet)
    return ClusterReport(cluster, "updated", bullet, by)


def _read_cache(config: Config) -> dict:
    try:
        data = json.loads(bullet_cache_path(config).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a lost cache costs model calls, nothing else
    return data if isinstance(data, dict) else {}




def _display(config: Config, path) -> str:
    try:
        return path.relative_to(config.notes).as_posix()
    except ValueError:
        return str(path)

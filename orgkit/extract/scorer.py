"""A per-schema scorer fitted on a reviewer's verdicts, with the offline rules as its prior.

The offline extractor's signals become features of every (unit, dimension)
pair: whether today's rules took the unit (`prior`) and how strongly they rank
it (`support`), the section it sits in, label lines, cue phrases, similarity
to the rubric, similarity to the quotes the reviewer accepted and rejected for
the dimension (in other documents), of its heading to the headings those sat under
(by word stems: "Decision Outcome" is like "Decision"),
position and length. A logistic regression over them (weights shared by the
dimensions, plus a bias and a small deviation per dimension) is fitted by
Newton's method with an L2 penalty that pulls the weights toward the prior:
`prior` weighted `PRIOR_WEIGHT`, everything else nothing. With no verdicts
the fit is the prior, and a unit is taken exactly when today's rules take it;
each verdict moves the weights away from it as far as the evidence carries.
At the fit's own operating point a unit today's rules take is kept whatever its score
(the verdicts add claims to the rules' and rank them; an explicit `--min-score` is a plain
cut): a fit on documents of one template learns to trust its sections and scores the rules'
sure picks of another template (a status line) under its threshold (bench/README.md).
The fit's operating point leans toward recall, for the reviewer's sake: a claim missed costs
them a search of the source, a wrong one a click to reject it. It is the score cut with the best
F1 on the reviewed documents (each scored by a fit on the others), lowered to the lowest cut at
which at least `FLOOR` of the candidates taken there were accepted, when that is lower and
there are two reviewed documents or more; a schema whose sure claims are few keeps its best-F1
cut (bench/README.md).
A fitted scorer also keeps to the reviewer's density: a document gives a dimension at most
`CAP` times the quotes the reviewer accepted per reviewed document, the best-scored first
(it lifted precision more than any per-document feature tried: bench/README.md).
Constants and rules are chosen by folds of two sets of decision records (verdicts on five
documents, the other ten scored) and reported on two other schemas (bench/README.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .claim import not_a_claim
from .offline import (Pick, _cues, _is_label_line, _norm, _section_label, _support, extract_offline,
                      merged, one_point_each, stems, words_of)
from .rank import bm25_scores, embedding_scores
from .schema import Dimension, Schema, with_template_vocabulary
from .units import Document, Unit

FEATURES = ("prior", "support", "section", "other_section", "label_line", "cue", "rubric", "accepted_like",
            "rejected_like", "accepted_heading", "rejected_heading", "first_in_section", "lead", "position",
            "length", "item", "row", "heading", "not_claim")
PRIOR_WEIGHT = 4.0  # the prior's logit for a unit today's rules take is +2, for one they leave -2
PRIOR_BIAS = -2.0
L2 = 3.0  # the pull of the shared weights toward the prior (bench/README.md)
L2_DIMENSION = 4.0  # the pull of each dimension's own deviation toward the shared weights
IMPLICIT = 0.5  # a unit of a reviewed document that no verdict names counts this much as a rejection
CAP = 2.0  # a dimension gives a document at most this many times the claims the reviewer accepted per document
MIN_SCORE = 0.5  # the default operating point: a unit is taken when its score is at least this
FLOOR = 0.5  # the fit's operating point goes as low as keeps this share of the reviewed candidates taken accepted
_HEADING_NUMBER = re.compile(r"^\W*(?:adr\s*)?\d+[.:)]?\s*", re.I)


@dataclass(frozen=True)
class Verdict:
    """A reviewer's word on one quote of one source: taken (accept) or not (reject)."""

    source: str  # the source's key (its content hash)
    text: str
    fmt: str
    dimension: str  # the schema's dimension name
    quote: str
    accept: bool


@dataclass(frozen=True)
class Fit:
    """The scorer's weights for one schema, and what they came from."""

    schema: str
    weights: dict[str, float]
    biases: dict[str, float]
    deviations: dict[str, dict[str, float]] = field(default_factory=dict)
    verdicts: int = 0
    documents: int = 0
    digest: str = "prior"
    threshold: float = MIN_SCORE  # the operating point the verdicts favour (see `operating_point`)
    accepted: dict[str, list[str]] = field(default_factory=dict)  # dimension -> accepted quotes
    rejected: dict[str, list[str]] = field(default_factory=dict)
    accepted_headings: dict[str, list[str]] = field(default_factory=dict)
    rejected_headings: dict[str, list[str]] = field(default_factory=dict)
    density: dict[str, float] = field(default_factory=dict)  # dimension -> accepted quotes per reviewed document

    def to_json(self) -> dict:
        return {"schema": self.schema, "digest": self.digest, "threshold": self.threshold,
                "verdicts": self.verdicts, "documents": self.documents,
                "weights": self.weights, "biases": self.biases, "deviations": self.deviations,
                "accepted": self.accepted, "rejected": self.rejected, "accepted_headings": self.accepted_headings,
                "rejected_headings": self.rejected_headings, "density": self.density}

    @classmethod
    def from_json(cls, data: dict) -> "Fit":
        return cls(**{k: data[k] for k in ("schema", "weights", "biases", "deviations", "verdicts", "documents",
                                           "digest", "threshold", "accepted", "rejected", "accepted_headings",
                                           "rejected_headings", "density") if k in data})

    def cap(self, dimension: str) -> int | None:
        """How many claims of `dimension` one document may give: `CAP` times as many as the reviewer
        accepted per reviewed document (at least one); no limit before any verdict, or with `CAP` 0."""
        if dimension not in self.density or not CAP:
            return None
        return max(1, math.ceil(CAP * self.density[dimension]))

    def weights_for(self, dimension: str) -> list[float]:
        own = self.deviations.get(dimension, {})
        return [self.weights.get(f, 0.0) + own.get(f, 0.0) for f in FEATURES]

    @property
    def used(self) -> dict:
        """What a run records of the fit it used."""
        return {"digest": self.digest, "verdicts": self.verdicts, "documents": self.documents,
                "threshold": self.threshold, "caps": {d: self.cap(d) for d in self.density}}


def prior_fit(schema: Schema) -> Fit:
    """The scorer before any verdict: today's rules, as a logistic model."""
    return Fit(schema.name, {f: (PRIOR_WEIGHT if f == "prior" else 0.0) for f in FEATURES},
               {d.name: PRIOR_BIAS for d in schema.dimensions})


@dataclass
class Candidate:
    """One unit of a source as a claim of one dimension: its span, features and score."""

    dimension: str
    start: int
    end: int
    quote: str
    features: list[float]
    unit: int
    score: float = 0.0


def _heading_key(unit: Unit) -> str:
    """The innermost heading above a unit, as a comparable key ("3. Decision" -> "decision")."""
    title = unit.text if unit.kind == "heading" else (unit.section[-1] if unit.section else "")
    return _norm(_HEADING_NUMBER.sub("", title))


def _lexical(a: str, b: str) -> float:
    """How alike two texts are by their word stems (cosine of the stem sets)."""
    x, y = stems(a), stems(b)
    return len(x & y) / math.sqrt(len(x) * len(y)) if x and y else 0.0


class Likeness:
    """Similarity of units to reference quotes: embeddings when a model is at hand, else word stems."""

    def __init__(self, embed: Callable | None) -> None:
        self.embed = embed
        self.cache: dict[str, object] = {}

    def vectors(self, texts: Sequence[str]) -> list:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing and self.embed is not None:
            for text, vector in zip(missing, self.embed([t[:600] for t in missing])):
                v = np.asarray(vector, dtype=float)
                self.cache[text] = v / (np.linalg.norm(v) or 1.0)
        return [self.cache[t] for t in texts]

    def best(self, units: Sequence[str], refs: Sequence[str]) -> list[float]:
        """For each unit, its greatest similarity to any of `refs` (0 when there are none)."""
        if not refs or not units:
            return [0.0 for _ in units]
        if self.embed is None:
            return [max(_lexical(u, r) for r in refs) for u in units]
        import numpy as np

        sims = np.vstack(self.vectors(list(units))) @ np.vstack(self.vectors(list(refs))).T
        return [max(0.0, float(x)) for x in sims.max(axis=1)]


def candidates(doc: Document, schema: Schema, fit: Fit, embed: Callable | None = None,
               likeness: Likeness | None = None, prior: list[Pick] | None = None) -> list[Candidate]:
    """Every unit of `doc` as a candidate claim of every dimension of `schema`, with its features."""
    units = [u for u in doc.units if not u.extra.get("title")]
    if not units:
        return []
    likeness = likeness or Likeness(embed)
    schema = with_template_vocabulary(schema)
    prior = extract_offline(doc, schema, embed) if prior is None else prior
    texts = [u.text for u in units]
    queries = [f"{d.name}. {' '.join(d.headings)}. {d.rubric}" for d in schema.dimensions]
    sims = bm25_scores(texts, queries)
    if embed is not None:
        dense = embedding_scores(embed, texts, queries)
        sims = [[(a + b) / 2 for a, b in zip(row, other)] for row, other in zip(sims, dense)]
    labels = [_section_label(u, schema) for u in units]
    heads = [_heading_key(u) for u in units]
    rank: dict[tuple[str, ...], int] = {}
    ranks = []
    for u in units:
        ranks.append(rank.get(u.section, 0))
        rank[u.section] = ranks[-1] + 1
    out = []
    for d_index, dim in enumerate(schema.dimensions):
        taken = [p for p in prior if p.dimension == dim.name]
        accepted = likeness.best(texts, fit.accepted.get(dim.name, []))
        rejected = likeness.best(texts, fit.rejected.get(dim.name, []))
        good_heads = set(fit.accepted_headings.get(dim.name, []))
        bad_heads = set(fit.rejected_headings.get(dim.name, []))
        cues = _cues(dim)
        for k, u in enumerate(units):
            pick = next((p for p in taken if p.start < u.end and u.start < p.end), None)
            start, end = (pick.start, pick.end) if pick else (u.start, u.end)
            gh = max((_lexical(heads[k], h) for h in good_heads), default=0.0) if heads[k] else 0.0
            bh = max((_lexical(heads[k], h) for h in bad_heads), default=0.0) if heads[k] else 0.0
            x = _features(u, k, dim, labels[k], sims[d_index][k], pick, ranks[k], len(units), cues,
                          accepted[k], rejected[k], gh, bh, _support(units, labels, sims[d_index], k, dim))
            out.append(Candidate(dim.name, start, end, doc.text[start:end], x, k))
    return out


def _features(u: Unit, k: int, dim: Dimension, label: tuple[str | None, bool], sim: float, pick: Pick | None,
              rank: int, count: int, cues: list, accepted: float, rejected: float, good_head: float,
              bad_head: float, support: float) -> list[float]:
    name, _ = label
    values = {"prior": float(pick is not None), "support": support / 2, "section": float(name == dim.name),
              "other_section": float(bool(name) and name != dim.name),
              "label_line": float(_is_label_line(u, dim)),
              "cue": float(any(c.search(u.text.lower()) for c in cues)), "rubric": sim,
              "accepted_like": accepted, "rejected_like": rejected, "accepted_heading": good_head,
              "rejected_heading": bad_head, "first_in_section": float(rank == 0), "lead": float(u.lead),
              "position": k / max(1, count - 1), "length": min(len(words_of(u.text)), 60) / 60,
              "item": float(u.kind == "item"), "row": float(u.kind == "row"),
              "heading": float(u.kind == "heading"),
              "not_claim": float(not_a_claim(u.text, "question" in dim.rubric.lower()) is not None)}
    return [values[f] for f in FEATURES]


def logit(fit: Fit, cand: Candidate) -> float:
    weights = fit.weights_for(cand.dimension)
    return fit.biases.get(cand.dimension, PRIOR_BIAS) + sum(w * x for w, x in zip(weights, cand.features))


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


def scored(cands: list[Candidate], fit: Fit) -> list[Candidate]:
    for cand in cands:
        cand.score = sigmoid(logit(fit, cand))
    return cands


def kept_score(cand: Candidate, min_score: float, rules: bool) -> float:
    """A candidate's score as `choose` weighs it: with `rules`, a unit today's rules take counts
    as scored at least `min_score`."""
    return max(cand.score, min_score) if rules and cand.features[FEATURES.index("prior")] else cand.score


def choose(doc: Document, schema: Schema, cands: list[Candidate], min_score: float, fit: Fit,
           rules: bool = True) -> list[Pick]:
    """The candidates at or over `min_score`, and with `rules` those today's rules take (a unit
    they take counts as scored at least `min_score`: the verdicts add to the rules' picks and
    rank them, the cap may drop them), each unit for its best dimension, each dimension its
    best `fit.cap` of them, one claim per point."""
    best: dict[int, tuple[float, Candidate]] = {}
    for cand in cands:
        score = kept_score(cand, min_score, rules)
        if score >= min_score and (cand.unit not in best or score > best[cand.unit][0]):
            best[cand.unit] = (score, cand)
    picks = []
    count: dict[str, int] = {}
    for score, c in sorted(best.values(), key=lambda sc: (-sc[0], sc[1].start)):
        count[c.dimension] = count.get(c.dimension, 0) + 1
        cap = fit.cap(c.dimension)
        if cap is None or count[c.dimension] <= cap:
            picks.append(Pick(c.dimension, c.start, c.end, c.quote, score))
    units = [u for u in doc.units if not u.extra.get("title")]
    kept = one_point_each(merged(picks, doc.text), units)
    order = [d.name for d in schema.dimensions]
    return sorted(kept, key=lambda p: (order.index(p.dimension) if p.dimension in order else len(order), p.start))


def extract_scored(doc: Document, schema: Schema, fit: Fit, min_score: float | None = None,
                   embed: Callable | None = None, likeness: Likeness | None = None,
                   rules: bool | None = None) -> list[Pick]:
    """The offline extractor under a fitted scorer: grounded picks, each with its score. `rules`
    (by default: when no `min_score` is given, the fit's own operating point) keeps the units
    today's rules take."""
    cut = fit.threshold if min_score is None else min_score
    keep = min_score is None if rules is None else rules
    return choose(doc, schema, scored(candidates(doc, schema, fit, embed, likeness), fit), cut, fit, keep)


def explain(doc: Document, schema: Schema, fit: Fit, min_score: float | None,
            embed: Callable | None = None, rules: bool | None = None) -> list[dict]:
    """Why each unit was or was not taken, per dimension: its features, the weights, its score
    (`fitted`: the fit's own, `score`: as weighed, see `kept_score`)."""
    cands = scored(candidates(doc, schema, fit, embed), fit)
    cut = fit.threshold if min_score is None else min_score
    keep = min_score is None if rules is None else rules
    taken = {(p.dimension, p.start) for p in choose(doc, schema, cands, cut, fit, keep)}
    tags = {d.name: d.tag for d in schema.dimensions}
    out = []
    for cand in cands:
        weights = fit.weights_for(cand.dimension)
        out.append({"dimension": tags.get(cand.dimension, cand.dimension), "start": cand.start, "end": cand.end,
                    "quote": cand.quote, "score": round(kept_score(cand, cut, keep), 4),
                    "fitted": round(cand.score, 4), "taken": (cand.dimension, cand.start) in taken,
                    "bias": round(fit.biases.get(cand.dimension, PRIOR_BIAS), 4),
                    "features": {f: round(x, 4) for f, x in zip(FEATURES, cand.features)},
                    "weights": {f: round(w, 4) for f, w in zip(FEATURES, weights)}})
    return out


def digest(verdicts: list[Verdict]) -> str:
    """A fingerprint of the verdicts and the constants a fit came from."""
    rows = sorted(f"{v.source}\t{v.dimension}\t{v.accept}\t{v.quote}" for v in verdicts)
    constants = f"{PRIOR_WEIGHT} {PRIOR_BIAS} {L2} {L2_DIMENSION} {IMPLICIT} {CAP} {FLOOR} {FEATURES}"
    return hashlib.sha256("\n".join([constants, *rows]).encode("utf-8")).hexdigest()[:16]


def _spans(text: str, quote: str) -> tuple[int, int] | None:
    from .anchor import find_quote

    return find_quote(text, quote)


def _covers(unit_span: tuple[int, int], quote_span: tuple[int, int]) -> bool:
    """Whether a candidate quote stands for a verdict's quote (they share at least half of the shorter)."""
    overlap = min(unit_span[1], quote_span[1]) - max(unit_span[0], quote_span[0])
    return overlap > 0 and overlap * 2 >= min(unit_span[1] - unit_span[0], quote_span[1] - quote_span[0])


def fit_verdicts(schema: Schema, verdicts: list[Verdict], embed: Callable | None = None,
                 l2: float | None = None, implicit: float | None = None) -> Fit:
    """The scorer fitted on `verdicts` (the prior when there are none)."""
    from .units import segment

    base = prior_fit(schema)
    if not verdicts:
        return base
    names = [d.name for d in schema.dimensions]
    docs: dict[str, tuple[str, str]] = {}
    for v in verdicts:
        docs.setdefault(v.source, (v.text, v.fmt))
    segmented = {key: segment(text, fmt) for key, (text, fmt) in docs.items()}
    references = _references(verdicts, segmented)
    likeness = Likeness(embed)
    rows: list[list[float]] = []
    labels: list[float] = []
    weights: list[float] = []
    dims: list[int] = []
    groups: list[int] = []
    for group, (key, doc) in enumerate(segmented.items()):
        others = _references([v for v in verdicts if v.source != key], segmented)
        cands = candidates(doc, schema, _with_references(base, others), embed, likeness)
        mine = [v for v in verdicts if v.source == key]
        spans = [(v, _spans(doc.text, v.quote)) for v in mine]
        for cand in cands:
            said = [v for v, span in spans if span and v.dimension == cand.dimension
                    and _covers((cand.start, cand.end), span)]
            if any(v.accept for v in said):
                label, weight = 1.0, 1.0
            elif said:
                label, weight = 0.0, 1.0
            else:
                label, weight = 0.0, IMPLICIT if implicit is None else implicit
            if cand.dimension not in names:
                continue
            rows.append(cand.features)
            labels.append(label)
            weights.append(weight)
            dims.append(names.index(cand.dimension))
            groups.append(group)
    penalty = L2 if l2 is None else l2
    shared, biases, deviations = _newton(rows, labels, weights, dims, len(names), penalty)
    fitted = _with_references(base, references)
    chances = _held_out_chances(rows, labels, weights, dims, groups, len(names), penalty)
    return Fit(schema.name, dict(zip(FEATURES, shared)), dict(zip(names, biases)),
               {n: dict(zip(FEATURES, dev)) for n, dev in zip(names, deviations)},
               verdicts=len(verdicts), documents=len(docs), digest=digest(verdicts),
               threshold=operating_point(chances, labels, len(docs) > 1), density=_density(verdicts, names, len(docs)),
               accepted=fitted.accepted, rejected=fitted.rejected, accepted_headings=fitted.accepted_headings,
               rejected_headings=fitted.rejected_headings)


def _density(verdicts: list[Verdict], names: list[str], documents: int) -> dict[str, float]:
    """Per dimension, the quotes the reviewer accepted per reviewed document: how many points such
    a document holds in their eyes (a reviewer marking one point a dimension wants fewer claims
    than one marking five)."""
    return {n: sum(v.accept and v.dimension == n for v in verdicts) / documents for n in names}


def _references(verdicts: list[Verdict], docs: dict[str, Document]) -> dict[str, dict[str, list[str]]]:
    """The accepted and rejected quotes per dimension, and the headings they sat under."""
    out: dict[str, dict[str, list[str]]] = {"accepted": {}, "rejected": {}, "accepted_headings": {},
                                            "rejected_headings": {}}
    for v in verdicts:
        which = "accepted" if v.accept else "rejected"
        out[which].setdefault(v.dimension, []).append(v.quote)
        span = _spans(v.text, v.quote)
        unit = next((u for u in docs[v.source].units if span and u.start <= span[0] < u.end), None)
        key = _heading_key(unit) if unit else ""
        if key and key not in out[f"{which}_headings"].setdefault(v.dimension, []):
            out[f"{which}_headings"][v.dimension].append(key)
    return out


def _with_references(fit: Fit, refs: dict[str, dict[str, list[str]]]) -> Fit:
    from dataclasses import replace

    return replace(fit, accepted=refs["accepted"], rejected=refs["rejected"],
                   accepted_headings=refs["accepted_headings"], rejected_headings=refs["rejected_headings"])


def _held_out_chances(rows: list[list[float]], labels: list[float], weights: list[float], dims: list[int],
                      groups: list[int], n_dims: int, l2: float) -> list[float]:
    """Each reviewed document's candidates scored by a fit on the other documents (a lone document
    by the fit on itself): the operating point is chosen on scores like those of a document not yet seen."""
    import numpy as np

    out = [0.0] * len(rows)
    for group in sorted(set(groups)):
        train = [i for i, g in enumerate(groups) if g != group] or list(range(len(rows)))  # one document: itself
        shared, biases, devs = _newton([rows[i] for i in train], [labels[i] for i in train],
                                       [weights[i] for i in train], [dims[i] for i in train], n_dims, l2)
        for i, g in enumerate(groups):
            if g == group:
                z = biases[dims[i]] + float(np.dot(np.add(shared, devs[dims[i]]), rows[i]))
                out[i] = sigmoid(z)
    return out


def _newton(rows: list[list[float]], labels: list[float], weights: list[float], dims: list[int], n_dims: int,
            l2: float) -> tuple[list[float], list[float], list[list[float]]]:
    """Weighted logistic regression: shared weights pulled toward the prior by `l2`, a bias per
    dimension pulled toward the prior's, each dimension's deviation pulled toward none by
    `L2_DIMENSION`; Newton's method (the problem is small and convex)."""
    import numpy as np

    n_f = len(FEATURES)
    x = np.asarray(rows, dtype=float)
    one_hot = np.zeros((len(rows), n_dims))
    one_hot[np.arange(len(rows)), dims] = 1.0
    per_dim = (one_hot[:, :, None] * x[:, None, :]).reshape(len(rows), n_dims * n_f)
    design = np.hstack([x, one_hot, per_dim])
    target = np.concatenate([[PRIOR_WEIGHT if f == "prior" else 0.0 for f in FEATURES],
                             [PRIOR_BIAS] * n_dims, np.zeros(n_dims * n_f)])
    penalty = np.concatenate([np.full(n_f, l2), np.full(n_dims, l2), np.full(n_dims * n_f, L2_DIMENSION)])
    y, w = np.asarray(labels), np.asarray(weights)
    theta = target.copy()
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(design @ theta, -30, 30)))
        grad = design.T @ (w * (p - y)) + penalty * (theta - target)
        hess = (design * (w * p * (1 - p))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    shared = [float(t) for t in theta[:n_f]]
    biases = [float(t) for t in theta[n_f:n_f + n_dims]]
    devs = theta[n_f + n_dims:].reshape(n_dims, n_f)
    return shared, biases, [[float(t) for t in row] for row in devs]


def operating_point(chances: list[float], labels: list[float], held_out: bool = True) -> float:
    """The score cut for the reviewed documents' candidates (`chances`, each from a fit without
    its document; `labels` 1 for accepted): the cut with the best F1 (ties: the higher cut), so a
    schema whose claims are rare gets a lower bar than one whose claims stand out, lowered to the
    lowest cut at which at least `FLOOR` of the candidates taken were accepted when that is lower
    and the chances are `held_out` (a lone reviewed document is scored by its own fit, whose
    precision flatters it: then the best F1 stands).

    F1 weighs a missed claim and a wrong one alike; to the reviewer a miss costs a search of the
    source and a wrong claim a click to reject it, so the cut goes as low as the verdicts say the
    claims taken stay right at least as often as `FLOOR`. It never goes above the best-F1 cut:
    where only a few sure candidates reach `FLOOR` (claims spread over prose), the floor would
    be a higher cut, and the best F1 stays."""
    positives = sum(labels)
    if not positives:
        return MIN_SCORE
    best = (0.0, MIN_SCORE)
    lowest: float | None = None
    for step in range(5, 96, 5):
        cut = step / 100
        taken = [y for c, y in zip(chances, labels) if c >= cut]
        hits = sum(taken)
        f1 = 2 * hits / (len(taken) + positives) if taken else 0.0
        best = max(best, (round(f1, 6), cut))
        if lowest is None and taken and hits / len(taken) >= FLOOR:
            lowest = cut
    return best[1] if lowest is None or not held_out else min(best[1], lowest)


def fit_json(fit: Fit) -> str:
    return json.dumps(fit.to_json(), ensure_ascii=False, sort_keys=True, indent=1)

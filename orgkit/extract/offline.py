"""The offline extractor: grounded quotes chosen without a language model.

For each dimension of the schema, the source's units (sentences, list items,
table rows, headings) are ranked by four signals, strongest first:
1. the section they sit in: a heading that names the dimension (its
   `:HEADINGS:`, its name) labels everything under it, down to a sub-heading
   that names another dimension;
2. label lines such as `Status: accepted` whose label names the dimension
   (the value is the quote);
3. cue phrases: the quoted phrases in the rubric ("instead of", "we will");
   outside a labelled section only a cue phrase admits a unit, and only for a
   dimension the document has no section for;
4. similarity to the rubric (BM25, blended half and half with embeddings when
   a local model is at hand), with a preference for the first units of a
   section and of a paragraph.
Only claims are candidates (`claim.not_a_claim`: statements, not headings,
questions, lead-ins, list labels or an option's pros and cons); a lead-in and
the fragments it lists make one claim together. Per source and dimension the
candidates scoring at least `NEAR_BEST` of the best one's and at least their
mean are kept, so a dimension gets as many claims as the source has statements
standing out for it, not a fixed count; quotes of one dimension that overlap
are merged, and of two that state one point (`same_point`) the better is kept. Each unit
goes to one dimension at most, and a unit that repeats a quote already picked
(an option that is also the decision) is skipped. The model path filters its
candidates the same way (`held_to_claims`).
Every quote is a span of the source, so every quote is grounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..index.words import query_terms
from .rank import bm25_scores, embedding_scores
from .claim import not_a_claim
from .schema import Dimension, Schema, with_template_vocabulary
from .units import Document, Unit

NEAR_BEST = 0.5  # a dimension keeps its candidates scoring this share of its best one's (bench/README.md)
SAME_POINT = 0.5  # two claims of a dimension sharing this share of the shorter one's word stems make one point
STEM = 5  # a word's stem, roughly: its first letters (the stem of "deciding" and "decided")
JOIN_WORDS = 50  # a lead-in and the fragments it lists make one claim up to this many words
_NORM = re.compile(r"[^a-z0-9]+")
_LABEL = re.compile(r"^[\W_]*([A-Za-z][A-Za-z ]{1,30}?)[\W_]*:[\W_]*(\S.*?)[\s*_]*$")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,40})[\"”]")


@dataclass(frozen=True)
class Pick:
    dimension: str
    start: int
    end: int
    quote: str
    score: float

    @property
    def claim(self) -> str:
        """The claim in the reader's words: the quote's own sentence without its markup."""
        return statement(self.quote)


_LINK_MD = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_LINK_ORG = re.compile(r"\[\[[^\]]*\](?:\[([^\]]*)\])?\]")
_EMPHASIS = re.compile(r"(?<![\w*_~=`])([*_~=`]{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*_~=`])")
_LIST_MARK = re.compile(r"^(?:[-*+>]|\d{1,3}[.)]|[A-Za-z][.)])[ \t]+")


def statement(text: str) -> str:
    """`text` as a plain sentence: one line, without list markers, emphasis, code marks or link
    targets (a link counts as its description), its first letter a capital."""
    flat = " ".join(text.split())
    flat = _LIST_MARK.sub("", flat)
    flat = _LINK_ORG.sub(lambda m: m.group(1) or "", _LINK_MD.sub(r"\1", flat))
    for _ in range(2):  # **_nested_** marks
        flat = _EMPHASIS.sub(r"\2", flat)
    flat = flat.strip()
    return flat[:1].upper() + flat[1:]


def words_of(text: str) -> list[str]:
    """The words of `text` as a reader counts them (markup and punctuation aside)."""
    return re.findall(r"[^\W_]+(?:['’][^\W_]+)?", text)


def _norm(text: str) -> str:
    return " ".join(_NORM.sub(" ", text.lower()).split())


def _keywords(dim: Dimension) -> list[str]:
    return [k for k in {_norm(h) for h in (*dim.headings, dim.name)} if k]


def heading_match(title: str, dim: Dimension) -> int:
    """3: the heading is a keyword; 2: it starts with one ("Status: Deprecated"); 1: contains one; 0: no."""
    norm = _norm(re.sub(r"^\W*(?:adr\s*)?\d+[.:)]?\s*", "", title, flags=re.I))
    best = 0
    for key in _keywords(dim):
        if norm == key:
            return 3
        if norm.startswith(key + " "):
            best = max(best, 2)
        elif f" {key} " in f" {norm} ":
            best = max(best, 1)
    return best


def _label_of(title: str, schema: "Schema | _OneDim") -> tuple[str | None, int]:
    """The dimension a heading names, and how strongly (ties go to the longer keyword)."""
    best: tuple[str | None, int, int] = (None, 0, 0)
    for dim in schema.dimensions:
        strength = heading_match(title, dim)
        if strength:
            length = max((len(k) for k in _keywords(dim) if k in _norm(title)), default=0)
            if (strength, length) > (best[1], best[2]):
                best = (dim.name, strength, length)
    return best[0], best[1]


def _cues(dim: Dimension) -> list[re.Pattern[str]]:
    return [re.compile(rf"\b{re.escape(p.strip().lower())}s?\b") for p in _QUOTED.findall(dim.rubric)
            if p.strip()]


def extract_offline(doc: Document, schema: Schema, embed: Callable | None = None,
                    demote: Demotions | None = None) -> list[Pick]:
    """The best grounded spans of `doc` for every dimension of `schema`, less what `demote` says
    people keep deleting (see `demoted`)."""
    units = [u for u in doc.units if not u.extra.get("title")]
    if not units:
        return []
    schema = with_template_vocabulary(schema)
    queries = [f"{d.name}. {' '.join(d.headings)}. {d.rubric}" for d in schema.dimensions]
    texts = [u.text for u in units]
    sims = bm25_scores(texts, queries)
    if embed is not None:  # words and meaning, half each: the headings and cues still lead
        dense = embedding_scores(embed, texts, queries)
        sims = [[(a + b) / 2 for a, b in zip(row, other)] for row, other in zip(sims, dense)]
    labels = [_section_label(u, schema) for u in units]
    taken: set[int] = set()
    picks: list[Pick] = []
    for d_index, dim in enumerate(schema.dimensions):
        picks += _label_lines(units, dim, taken)
    labelled = {p.dimension for p in picks}
    for d_index, dim in enumerate(schema.dimensions):
        if dim.name not in labelled:  # a `Status: accepted` line says it all
            picks += _from_sections(doc.text, units, labels, dim, sims[d_index], taken, picks)
    if not any(label for label, _ in labels) and not picks:  # no section named for any dimension
        picks = _by_similarity(units, schema, sims)
    for d_index, dim in enumerate(schema.dimensions):
        if not any(label == dim.name for label, _ in labels) and not any(p.dimension == dim.name for p in picks):
            picks += _from_cues(units, dim, sims[d_index], taken)
    picks = one_point_each(merged(picks, doc.text), units)
    if demote:
        picks = demoted(picks, demote)
    return sorted(picks, key=lambda p: (schema.dimensions.index(schema.dimension(p.dimension)), p.start))


@dataclass(frozen=True)
class Demotions:
    """What the corrections say the offline extractor should write less of."""

    dimensions: frozenset[str] = frozenset()  # dimensions whose claims people keep deleting
    shapes: frozenset[tuple[str, ...]] = frozenset()  # opening words of the claims they keep deleting

    def __bool__(self) -> bool:
        return bool(self.dimensions or self.shapes)


def shape(claim: str) -> tuple[str, ...]:
    """A claim's sentence shape: its first two words, lower-case, enumeration aside
    ("Option 2: good, because" -> ("option", "good"))."""
    return tuple(w.lower() for w in words_of(claim) if not w.isdigit() and len(w) > 1)[:2]


def demoted(picks: list[Pick], demote: Demotions) -> list[Pick]:
    """Picks less those of a demoted shape; a demoted dimension keeps only its best pick."""
    kept = [p for p in picks if shape(p.claim) not in demote.shapes]
    out = []
    for pick in kept:
        if pick.dimension in demote.dimensions:
            best = max((p for p in kept if p.dimension == pick.dimension), key=lambda p: (p.score, -p.start))
            if pick is not best:
                continue
        out.append(pick)
    return out


def _section_label(unit: Unit, schema: Schema) -> tuple[str | None, bool]:
    """(dimension of the innermost naming heading above the unit, whether the unit is that heading)."""
    path = list(unit.section) + ([unit.text] if unit.kind == "heading" else [])
    for k in range(len(path) - 1, -1, -1):
        name, strength = _label_of(path[k], schema)
        if name and strength:
            is_self = unit.kind == "heading" and k == len(path) - 1
            return name, is_self and strength == 3
    return None, False


def _label_lines(units: list[Unit], dim: Dimension, taken: set[int]) -> list[Pick]:
    """`Status: accepted`-style lines (and headings) whose label names the dimension: the value is the quote."""
    out = []
    for k, unit in enumerate(units):
        if not _is_label_line(unit, dim):
            continue
        first_line = unit.text.split("\n", 1)[0]
        line = first_line.rstrip(" *_")  # the label with its value: "Status: accepted"
        out.append(Pick(dim.name, unit.start, unit.start + len(line), line, 2.0))
        if unit.kind != "heading":
            taken.add(k)
        break
    return out


def _from_sections(text: str, units: list[Unit], labels: list[tuple[str | None, bool]], dim: Dimension,
                   sims: list[float], taken: set[int], picked: list[Pick]) -> list[Pick]:
    """The claims of the sections the dimension labels that score near the best of them (see
    `near_best`); near-repeats of quotes already picked are skipped."""
    inside = [k for k, (name, generic) in enumerate(labels)
              if name == dim.name and not generic and k not in taken and not _is_label_line(units[k], dim)
              and not _is_reference(units[k])]
    wants_questions = "question" in dim.rubric.lower()
    alone = _alone(units, inside)
    spans = {k: (units[k].start, units[k].end) for k in inside}
    spans.update(_joined_lead_ins(units, inside, wants_questions))
    inside = [k for k in inside if k in alone or _is_claim(units[k], wants_questions, spans[k])]
    if not inside:
        return []
    cues = _cues(dim)
    groups = _groups(units, labels, inside, dim)
    entries = {k for k in inside if _is_entry(units[k])}
    top = {g: min((units[k].depth for k in entries if groups[k] == g), default=0) for g in set(groups.values())}
    first_entries = [k for k in entries if groups[k] == 0 and units[k].depth == top[0]]
    listy = len(first_entries) >= 2  # the first section lists things: its entries lead
    rank_in_section: dict[int, int] = {}
    seen: dict[tuple[str, ...], int] = {}
    for k in inside:
        rank_in_section[k] = seen.get(units[k].section, 0)
        seen[units[k].section] = rank_in_section[k] + 1

    def score(k: int) -> float:
        u = units[k]
        s = sims[k] + 0.4 / (1 + rank_in_section[k]) + (0.2 if u.lead else 0.0) - 0.6 * groups[k]
        if k == inside[0] and u.kind != "heading":
            s += 0.4  # the section's opening statement
        s += 0.5 if any(c.search(u.text.lower()) for c in cues) else 0.0
        if listy and k in entries and u.depth == top[groups[k]]:
            s += 0.4
        if u.kind == "row":
            s -= 0.5
        return s

    out: list[Pick] = []
    for k, s in near_best([(k, score(k)) for k in inside]):
        start, end = spans[k]
        quote = text[start:end]
        if any(_repeats(quote, p.quote) for p in picked + out):
            continue
        taken.add(k)
        out.append(Pick(dim.name, start, end, quote, s))
    return out


def near_best(scored: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The candidates whose score is at least NEAR_BEST of the best one's and at least the mean of
    all of them, best first: how many claims a source gives for a dimension follows how many of
    its candidates stand out, not a fixed count (`NEAR_BEST`, fitted on the development
    annotation). One candidate, or candidates all scoring alike, are all kept; of two, the
    better, unless they tie (the mean of the others than the best, which would keep both, did
    worse on the development annotation: bench/README.md)."""
    if not scored:
        return []
    best = max(s for _, s in scored)
    mean = sum(s for _, s in scored) / len(scored)
    floor = max(NEAR_BEST * best, mean) if best > 0 else best
    return sorted(((k, s) for k, s in scored if s >= floor), key=lambda ks: -ks[1])


def stems(text: str) -> set[str]:
    """The stems of the words of `text` that carry meaning (see `STEM`)."""
    return {w[:STEM] for w in query_terms(text)}


def same_point(text: str, better: str) -> bool:
    """Whether `text` states again the point of `better`, a claim of the same dimension: most of
    the shorter one's word stems are the other's ("We will use Postgres." after "We decided to
    use Postgres for the index.")."""
    mine, theirs = stems(text), stems(better)
    return bool(mine and theirs) and len(mine & theirs) >= SAME_POINT * min(len(mine), len(theirs))


def one_point_each(picks: list[Pick], units: list[Unit]) -> list[Pick]:
    """`picks` less those that state again, in a dimension, what a better-scored pick of it
    states: one point, one claim. Items of one list are points the author set apart, however
    alike their wording ("Option 1 would mean ...", "Option 2 would mean ...")."""
    kept: list[Pick] = []
    for pick in sorted(picks, key=lambda p: (-p.score, p.start)):
        if not any(k.dimension == pick.dimension and same_point(pick.quote, k.quote)
                   and not listed_apart(pick.start, k.start, units) for k in kept):
            kept.append(pick)
    return kept


def listed_apart(a: int, b: int, units: list[Unit]) -> bool:
    """Whether the quotes starting at `a` and `b` start two items of one list (same section, depth)."""
    def item(start: int) -> tuple | None:
        unit = next((u for u in units if u.start <= start < u.end), None)
        return (unit.section, unit.depth, unit.block) if unit and unit.kind == "item" else None
    first, second = item(a), item(b)
    return first is not None and second is not None and first[:2] == second[:2] and first[2] != second[2]


def _is_claim(unit: Unit, questions: bool, span: tuple[int, int]) -> bool:
    """Whether a unit quoted as `span` (a lead-in with its items) is a claim: a statement, not a
    heading or a row."""
    if unit.kind in ("heading", "row"):
        return False
    if (unit.start, unit.end) != span:
        return True  # a lead-in completed by its items
    return not_a_claim(unit.text, questions) is None


def _joined_lead_ins(units: list[Unit], inside: list[int], questions: bool) -> dict[int, tuple[int, int]]:
    """Lead-ins ("In the following cases, code ownership may be omitted:") with the fragments
    listed after them, as one span when the whole is short: the items complete the sentence."""
    out = {}
    for k in inside:
        if units[k].kind == "heading" or not units[k].text.rstrip(" *_").endswith(":"):
            continue
        if not_a_claim(units[k].text.rstrip(" *_")[:-1] + ".", questions) is not None:
            continue
        j = k + 1
        while j < len(units) and units[j].kind == "item" and units[j].section == units[k].section \
                and not_a_claim(units[j].text, questions) in ("fragment", "subordinate"):
            j += 1
        whole_list = j == len(units) or units[j].kind != "item" or units[j].section != units[k].section
        if j > k + 1 and whole_list and len(words_of(" ".join(u.text for u in units[k:j]))) <= JOIN_WORDS:
            out[k] = (units[k].start, units[j - 1].end)
    return out


def _alone(units: list[Unit], inside: list[int]) -> set[int]:
    """The units that are the whole text of their section (a bare `Accepted` under "Status")."""
    count: dict[tuple[str, ...], int] = {}
    for k in inside:
        if units[k].kind != "heading":
            count[units[k].section] = count.get(units[k].section, 0) + 1
    return {k for k in inside if units[k].kind != "heading" and count[units[k].section] == 1}


def _repeats(text: str, earlier: str) -> bool:
    """Whether `text` mostly says again what `earlier` said (an option that is also the decision)."""
    mine, theirs = set(query_terms(text)), set(query_terms(earlier))
    return len(mine) >= 2 and len(mine & theirs) >= 0.6 * len(mine | theirs)


def _groups(units: list[Unit], labels, inside: list[int], dim: Dimension) -> dict[int, int]:
    """Which labelled section (0: the first in the document) each unit sits in."""
    roots: dict[tuple[str, ...], int] = {}
    out = {}
    for k in inside:
        section = units[k].section
        root = section
        for depth in range(1, len(section) + 1):
            name, strength = _label_of(section[depth - 1], _OneDim(dim))
            if strength:
                root = section[:depth]
                break
        out[k] = roots.setdefault(root, len(roots))
    return out


class _OneDim:
    """A stand-in schema holding one dimension, to ask whether a heading names it."""

    def __init__(self, dim: Dimension) -> None:
        self.dimensions = (dim,)


def _is_entry(unit: Unit) -> bool:
    """An enumerated thing: a list item, a table row, a sub-heading, or a paragraph led by bold text."""
    if unit.kind in ("item", "heading"):
        return unit.lead
    return unit.lead and unit.text.startswith(("**", "__"))


def _is_reference(unit: Unit) -> bool:
    """A unit that is only a link (a reading list, a references section)."""
    text = unit.text.lstrip("*_ ")
    return text.startswith(("[", "http://", "https://", "<http"))


def _is_label_line(unit: Unit, dim: Dimension) -> bool:
    """Whether `unit` is a `Label: value` line naming `dim` (a heading only when the label is its name)."""
    m = _LABEL.match(unit.text.split("\n", 1)[0])
    if not m or _norm(m.group(1)) not in set(_keywords(dim)):
        return False
    return unit.kind != "heading" or _norm(m.group(1)) == _norm(dim.name)


def _by_similarity(units: list[Unit], schema: Schema, sims: list[list[float]]) -> list[Pick]:
    """The claims of a source whose sections follow none of the schema's dimensions (a note
    summarising a paper under headings of its own): each claim goes to the dimension it is most
    like (rubric similarity, cue phrases), and each dimension keeps its claims near its best."""
    by_dim: dict[int, list[tuple[int, float]]] = {}
    for k, unit in enumerate(units):
        if unit.kind in ("heading", "row") or _is_reference(unit):
            continue
        scores = []
        for d_index, dim in enumerate(schema.dimensions):
            if not_a_claim(unit.text, "question" in dim.rubric.lower()) is None:
                cue = any(c.search(unit.text.lower()) for c in _cues(dim))
                scores.append((sims[d_index][k] + (0.5 if cue else 0.0) + (0.2 if unit.lead else 0.0), d_index))
        if scores:
            score, d_index = max(scores)
            by_dim.setdefault(d_index, []).append((k, score))
    out = []
    for d_index, scored in by_dim.items():
        out += [Pick(schema.dimensions[d_index].name, units[k].start, units[k].end, units[k].text, s)
                for k, s in near_best(scored)]
    return out


def _from_cues(units: list[Unit], dim: Dimension, sims: list[float], taken: set[int]) -> list[Pick]:
    """Claims outside any section the dimension names, admitted by one of its cue phrases."""
    cues = _cues(dim)
    if not cues:
        return []
    wants_questions = "question" in dim.rubric.lower()
    hits = [k for k, u in enumerate(units)
            if k not in taken and u.kind not in ("heading", "row") and not_a_claim(u.text, wants_questions) is None
            and any(c.search(u.text.lower()) for c in cues)]
    out = []
    for k, s in near_best([(k, 0.5 + sims[k]) for k in hits]):
        taken.add(k)
        out.append(Pick(dim.name, units[k].start, units[k].end, units[k].text, s))
    return out


def merged(picks: list[Pick], text: str) -> list[Pick]:
    """Picks with those of one dimension that overlap made one: they quote one point. (Joining
    the next sentence of a paragraph too, when it goes on about the one before, lost more
    points than it saved on the development annotation; see bench/README.md.)"""
    out: list[Pick] = []
    for pick in sorted(picks, key=lambda p: (p.dimension, p.start)):
        last = out[-1] if out else None
        if last and last.dimension == pick.dimension and pick.start < last.end:
            end = max(last.end, pick.end)
            out[-1] = Pick(last.dimension, last.start, end, text[last.start:end], max(last.score, pick.score))
            continue
        out.append(pick)
    return out


def held_to_claims(doc: Document, schema: Schema, grounded: list[dict]) -> tuple[list[dict], list[dict]]:
    """A model's grounded candidates put through the offline extractor's discipline: (kept, cut).

    A candidate is cut when its quote is not a claim (a label, question, lead-in or pro/con
    taken out of its frame; a label line naming the dimension, or all a section says, is
    kept), when it scores below `NEAR_BEST` of its dimension's best candidate for the source
    (the same signals: the section it sits in, cue phrases, similarity to the rubric,
    position), or when it quotes or states again what a better candidate of its dimension
    already does (`same_point`).
    Candidates of dimensions the schema lacks, and quotes not found, pass untouched (the
    scribe refuses the one, the audit counts the other)."""
    schema = with_template_vocabulary(schema)
    units = [u for u in doc.units if not u.extra.get("title")]
    dims = {d.name: d for d in schema.dimensions}
    if not units:
        return grounded, []
    sims = bm25_scores([u.text for u in units], [f"{d.name}. {' '.join(d.headings)}. {d.rubric}"
                                                 for d in schema.dimensions])
    labels = [_section_label(u, schema) for u in units]
    scored: dict[str, list[tuple[int, float]]] = {}
    verdict: dict[int, str | None] = {}  # candidate -> why it is cut (None: kept)
    for n, cand in enumerate(grounded):
        dim = dims.get(cand["dimension"])
        if dim is None or cand["start"] < 0:
            verdict[n] = None
            continue
        covered = [k for k, u in enumerate(units) if u.start < cand["end"] and cand["start"] < u.end]
        reason = _why_not(doc.text, cand, units, covered, dim)
        if reason:
            verdict[n] = f"not a claim: {reason}"
            continue
        d_index = schema.dimensions.index(dim)
        best = max((_support(units, labels, sims[d_index], k, dim) for k in covered), default=0.0)
        scored.setdefault(dim.name, []).append((n, best))
        verdict[n] = "far below the best"
    for pairs in scored.values():
        better: list[dict] = []
        for n, _ in near_best(pairs):
            start, end = grounded[n]["start"], grounded[n]["end"]
            if any(start < b["end"] and b["start"] < end or same_point(grounded[n]["quote"], b["quote"])
                   and not listed_apart(start, b["start"], units) for b in better):
                verdict[n] = "repeats a better quote"
                continue
            better.append(grounded[n])
            verdict[n] = None
    kept = [c for n, c in enumerate(grounded) if verdict[n] is None]
    cut = [{**c, "reason": verdict[n]} for n, c in enumerate(grounded) if verdict[n] is not None]
    return kept, cut


def _why_not(text: str, cand: dict, units: list[Unit], covered: list[int], dim: Dimension) -> str | None:
    """Why a model's quote is not a claim, or None: a label line of its dimension, or the whole of
    what its section says (a bare `Accepted` under "Status"), is one."""
    line_start = text.rfind("\n", 0, cand["start"]) + 1
    line_end = text.find("\n", cand["end"])
    line = text[line_start:line_end if line_end >= 0 else len(text)]
    label = _LABEL.match(line.strip())
    if label and _norm(label.group(1)) in set(_keywords(dim)):
        return None
    if len(covered) == 1 and units[covered[0]].kind != "heading" \
            and sum(u.section == units[covered[0]].section and u.kind != "heading" for u in units) == 1:
        return None
    if any(units[k].kind == "heading" and units[k].start <= cand["start"] and cand["end"] <= units[k].end
           for k in covered):
        return "heading"
    return not_a_claim(cand["quote"], "question" in dim.rubric.lower())


def _support(units: list[Unit], labels: list[tuple[str | None, bool]], sims: list[float], k: int,
             dim: Dimension) -> float:
    """How well unit `k` answers `dim`, on the scale of the section ranking: similarity to the
    rubric, cue phrases, leading its paragraph, and the section it sits in (early in a section
    named for the dimension best; a section named for another dimension counts against)."""
    unit = units[k]
    score = sims[k] + (0.2 if unit.lead else 0.0)
    score += 0.5 if any(c.search(unit.text.lower()) for c in _cues(dim)) else 0.0
    name = labels[k][0]
    if name == dim.name:
        rank = sum(u.section == unit.section and u.kind != "heading" for u in units[:k])
        score += 0.4 / (1 + rank) + (0.4 if rank == 0 else 0.0)
    elif name:
        score -= 0.6
    return score

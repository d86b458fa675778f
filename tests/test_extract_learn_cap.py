"""The reviewer's density: a fitted scorer gives a document at most `CAP` times the claims per
dimension that the reviewer accepted per reviewed document, and nothing is capped before any verdict."""

from __future__ import annotations

from pathlib import Path

from orgkit.extract.offline import extract_offline
from orgkit.extract.schema import parse_schema
from orgkit.extract.scorer import CAP, Verdict, explain, extract_scored, fit_verdicts, prior_fit
from orgkit.extract.units import segment

SCHEMA = """:PROPERTIES:
:ID: 0c6b2f1e-7a3d-4e58-9b21-4d7f3a9c8e02
:ORGKIT_SCHEMA: worries
:GROUNDED: t
:END:
#+title: Moves and their worries

* Decision
:PROPERTIES:
:TAG: wr_decision
:HEADINGS: Decision
:END:
What was decided.

* Risk
:PROPERTIES:
:TAG: wr_risk
:END:
Something that may go wrong.
"""

REVIEWED = ["""# Move the queue

## Decision

We will move the queue to Redis.

## Worries

The Redis node may run out of memory under load.
Failover can lose the last second of messages.
""", """# Move the cache

## Decision

We will move the cache to Memcached.

## Worries

An eviction storm may empty the cache at peak hours.
A restart could drop every warm key at once.
"""]

NEXT = """# Move the sessions

## Decision

We will keep the sessions in Postgres.

## Worries

A slow vacuum may stall the sessions table for minutes.
Connection limits could refuse logins at peak hours.
A failed migration might lock the table for a whole night.
Replication lag may show stale sessions after a failover.
A full disk could stop every write to the sessions table.
"""


def verdicts(per_document: int) -> list[Verdict]:
    """A reviewer who accepts each reviewed document's decision and its first `per_document` worries."""
    out = []
    for n, text in enumerate(REVIEWED):
        lines = text.splitlines()
        out.append(Verdict(f"doc{n}", text, "markdown", "Decision", lines[4], True))
        worries = lines[8:10]
        out += [Verdict(f"doc{n}", text, "markdown", "Risk", w, k < per_document) for k, w in enumerate(worries)]
    return out


def test_no_verdicts_no_cap_and_the_rules_own_picks() -> None:
    schema = parse_schema(SCHEMA, Path("worries.org"), "file")
    doc = segment(NEXT, "markdown")
    fit = prior_fit(schema)
    assert fit.density == {} and fit.used["caps"] == {}
    assert [(p.dimension, p.quote) for p in extract_scored(doc, schema, fit)] == \
        [(p.dimension, p.quote) for p in extract_offline(doc, schema)]


def test_a_sparse_reviewer_gets_fewer_claims_than_a_thorough_one() -> None:
    schema = parse_schema(SCHEMA, Path("worries.org"), "file")
    doc = segment(NEXT, "markdown")
    sparse, thorough = fit_verdicts(schema, verdicts(1)), fit_verdicts(schema, verdicts(2))
    assert sparse.density == {"Decision": 1.0, "Risk": 1.0} and thorough.density == {"Decision": 1.0, "Risk": 2.0}
    assert sparse.used["caps"] == {"Decision": CAP, "Risk": CAP} and thorough.cap("Risk") == 2 * CAP
    for fit in (sparse, thorough):
        uncapped = extract_scored(doc, schema, fit, min_score=0.0)
        risks = [p for p in uncapped if p.dimension == "Risk"]
        assert len(risks) <= fit.cap("Risk")  # however low the bar, the cap holds
        assert all(NEXT[p.start:p.end] == p.quote for p in uncapped)  # every quote grounded
    few = [p for p in extract_scored(doc, schema, sparse, min_score=0.0) if p.dimension == "Risk"]
    many = [p for p in extract_scored(doc, schema, thorough, min_score=0.0) if p.dimension == "Risk"]
    assert len(few) == CAP < len(many)
    rows = [r for r in explain(doc, schema, sparse, 0.0) if r["dimension"] == "wr_risk" and r["score"] > 0.0]
    left = [r["score"] for r in rows if not r["taken"] and r["quote"] not in {p.quote for p in few}]
    assert left and min(p.score for p in few) >= max(left)  # the cap keeps the best-scored

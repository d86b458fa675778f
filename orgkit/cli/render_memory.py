"""How the memory flow's results read in a terminal (deposit, deposits, review, recall)."""

from __future__ import annotations

import json
from typing import Any, Callable


def deposit(d: dict, options: dict) -> str:
    error = f"\n    error: {d['error']}" if d.get("error") else ""
    return f"{d['title']!r}  {d['lane']} lane  {d.get('stage', d['status'])}  {d['path']}  [{d['id']}]{error}"


def deposits(rows: list[dict], options: dict) -> str:
    return "\n".join(deposit(d, options) for d in rows) or "no deposits"


def librarian(r: dict, options: dict) -> str:
    if r["started"]:
        return "the librarian runs in the background"
    if r["waiting"]:
        return f"{r['waiting']} deposit(s) still wait for the librarian"
    return "nothing waits for the librarian"


def _chunks(p: dict) -> str:
    return ",".join(map(str, p["chunks"])) or "-"


def review_list(rows: list[dict], options: dict) -> str:
    out = []
    for p in rows:
        out.append(f"{p['id']}  {p['kind']:<6} {p['status']:<8} {p['summary']}")
        out.append(f"    deposit {p['deposit_title']!r} ({p['deposit_lane']} lane, {p['deposit_stage']}) "
                   f"[{p['deposit']}], chunks {_chunks(p)}")
        if p["reason"]:
            out.append(f"    {p['reason']}")
        if p.get("diff"):
            out.append(p["diff"].rstrip("\n"))
    return "\n".join(out) or "nothing to review"


def review_show(p: dict, options: dict) -> str:
    head = [f"{p['id']}  {p['kind']}  {p['status']}: {p['summary']}",
            f"  deposit {p['deposit']}, chunks {_chunks(p)}, by {p['model']}"]
    if p["reason"]:
        head.append(f"  {p['reason']}")
    if p["error"]:
        head.append(f"  cannot apply now: {p['error']}")
    return "\n".join(head) + "\n" + p["diff"].rstrip("\n")


def decision(r: dict, options: dict) -> str:
    done = r.get("accepted") or r.get("rejected")
    verb = "accepted" if "accepted" in r else "rejected" if "rejected" in r else "undid"
    what = f"{len(done)} proposal(s)" if done else f"batch {r.get('undoes')}"
    return f"{verb} {what} in batch {r['batch']}"


def review_batches(rows: list[dict], options: dict) -> str:
    return "\n".join(f"{r['id']}  {r['action']:<6} {r['state']:<11} {r['actor']}  {r['at']}  "
                     f"{len(r['proposals'])} proposal(s)" + (f", undone by {r['undone_by']}" if r["undone_by"] else "")
                     + "".join(f"\n    deposit {d['title']!r} [{d['id']}]" for d in r["deposits"])
                     for r in rows) or "no batches"


def review_trail(rows: list[dict], options: dict) -> str:
    return "\n".join(f"{r['seq']:>5}  {r['at']}  {r['actor']}  {r['action']} {r['subject']}"
                     + (f"  {json.dumps(r['detail'], ensure_ascii=False)}" if r.get("detail") else "")
                     for r in rows) or "nothing recorded yet"


def recall(doc: dict, options: dict) -> str:
    parts = []
    for d in doc["included"]:
        prov = d["provenance"]
        origin = prov["origin"]
        if prov.get("deposit"):
            origin += (f" {prov['deposit']} ({prov.get('lane')} lane), approved by {prov.get('approved_by')} "
                       f"at {prov.get('approved_at')}")
        parts.append(f"# {d['title']}  [{d['id']}]  ({d['file']}:{d['line']}, ~{d['tokens']} tokens)\n"
                     f"# from: {origin}\n{d['content'].rstrip()}\n")
    return "\n".join(parts)


MEMORY_RENDERERS: dict[str, Callable[[Any, dict], str]] = {
    "deposit": deposit, "deposits": deposits, "librarian": librarian, "review_list": review_list,
    "review_show": review_show,
    "review_accept": decision, "review_edit": decision, "review_reject": decision, "review_undo": decision,
    "review_batches": review_batches, "review_trail": review_trail, "recall": recall,
}

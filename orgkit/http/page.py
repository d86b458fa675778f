"""The review page: pending proposals as diffs, decided in the browser through the operations.

Plain server-rendered HTML with no script at all. A reviewer enters a token
once; it opens a server-side session (see `sessions`) whose HTTP-only,
same-site cookie only this page's paths accept (the API and MCP take bearer
headers only, so a cookie can never authorize them), marked `Secure` when the
request came over TLS (directly, or through a proxy in `http.trusted_proxies`
that says so) or `http.secure_cookies` is on. Signing out ends the session.
Every form carries a CSRF field tied to the session (before signing in: to a
random cookie of the login form); the Guard also refuses foreign Origins.
Decisions go through the same operations, and so the same writer and audit
log, as `orgkit review` on the command line.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from html import escape
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..memory.proposals import EDITABLE
from ..ops import OpContext, get, refusal
from ..tokens import Identity, TokenStore
from .guard import COOKIE, IDENTITY
from .signin import LIFETIME, Sessions

CSRF_COOKIE = "orgkit_csrf"
PAGE_OP = "review_list"  # the operation the page is built on: who may call it may use the page
CallAs = Callable[[OpContext, Identity, str, Any], Awaitable[tuple[int, dict]]]
_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                                       "frame-ancestors 'none'",
            "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "Cache-Control": "no-store"}
_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222}
h1{font-size:1.4em} h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ccc}
.proposal{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:1em 0}
pre{background:#f7f7f7;padding:.5em;font-size:13px;white-space:pre-wrap;overflow-wrap:anywhere}
.add{color:#0a6b0a} .del{color:#a31515} .meta{color:#666;font-size:13px}
.msg{background:#eef6ff;border:1px solid #9cc3ef;padding:.5em 1em}
form.inline{display:inline-block;margin-right:1em} table{border-collapse:collapse;font-size:13px}
td,th{border-bottom:1px solid #eee;padding:.2em .6em;text-align:left;vertical-align:top}
"""


def routes(ctx: OpContext, tokens: TokenStore, sessions: Sessions, call_as: CallAs) -> list[Route]:
    """The page's routes over `ctx`, deciding through `call_as` (the JSON ops' own runner)."""
    always_secure = bool(ctx.config["http.secure_cookies"])

    def secure(request: Request) -> bool:
        return always_secure or request.url.scheme == "https"

    def expected_csrf(request: Request) -> str | None:
        """The CSRF field this request's forms carry: the session's once signed in, else the login form's."""
        session = request.cookies.get(COOKIE)
        if request.scope.get(IDENTITY) is not None and session:
            return sessions.csrf(session)
        cookie = request.cookies.get(CSRF_COOKIE)
        return sessions.sign(cookie) if cookie else None

    def csrf_ok(request: Request, form: Any) -> bool:
        expected = expected_csrf(request)
        return expected is not None and hmac.compare_digest(str(form.get("csrf", "")), expected)

    def html(request: Request, render: Callable[[str], str], status: int = 200) -> Response:
        """A page whose forms carry the CSRF field (`render` gets it); sets the login form's cookie if missing."""
        fresh = None if request.cookies.get(CSRF_COOKIE) else secrets.token_urlsafe(32)
        csrf = expected_csrf(request) or sessions.sign(fresh or "")
        response = HTMLResponse(_document(render(csrf)), status_code=status, headers=_HEADERS)
        if fresh:
            response.set_cookie(CSRF_COOKIE, fresh, httponly=True, samesite="strict", path="/",
                                secure=secure(request))
        return response

    def login(request: Request, message: str = "", status: int = 200) -> Response:
        return html(request, lambda csrf: _login(csrf, message), status)

    def forbidden() -> Response:
        return HTMLResponse("forbidden: missing or wrong CSRF field", status_code=403, headers=_HEADERS)

    async def index(request: Request) -> Response:
        identity: Identity | None = request.scope.get(IDENTITY)
        if identity is None:
            return login(request)
        if (refused := _refusal(identity)) is not None:
            return login(request, refused, 403)
        note = request.query_params.get("note")
        if note:
            status, body = await call_as(ctx, identity, "read", {"ids": [note]})
            return html(request, lambda csrf: _note(note, body if status == 200 else None), status)
        sections = await _gather(ctx, identity, call_as)
        message = request.query_params.get("msg", "")
        return html(request, lambda csrf: _review(identity, sections, csrf, message))

    async def sign_in(request: Request) -> Response:
        form = await request.form()
        if not csrf_ok(request, form):
            return login(request, "the form had expired; sign in again", 403)
        token = str(form.get("token", "")).strip()
        identity = tokens.verify(token)
        if identity is None:
            return login(request, "that token is not valid", 401)
        if (refused := _refusal(identity)) is not None:
            return login(request, refused, 403)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, sessions.open(token), max_age=int(LIFETIME), httponly=True, samesite="strict",
                            path="/", secure=secure(request))
        return response

    async def sign_out(request: Request) -> Response:
        if not csrf_ok(request, await request.form()):
            return forbidden()
        sessions.close(request.cookies.get(COOKIE, ""))
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=secure(request))
        return response

    async def decided(request: Request, op: str, params: dict) -> Response:
        identity: Identity | None = request.scope.get(IDENTITY)
        if identity is None:
            return login(request, "sign in first", 401)
        _, body = await call_as(ctx, identity, op, params)
        message = body.get("error") or _done(op, body.get("result") or {})
        return RedirectResponse("/?msg=" + quote(message), status_code=303)

    async def decide(request: Request) -> Response:
        form = await request.form()
        if not csrf_ok(request, form):
            return forbidden()
        action, proposal = str(form.get("action", "")), str(form.get("proposal", ""))
        why = str(form.get("why", "")).strip() or None
        if action in ("accept", "reject"):
            return await decided(request, f"review_{action}", {"ids": [proposal], "why": why})
        if action == "edit":
            return await decided(request, "review_edit", {"id": proposal, "text": str(form.get("text", "")),
                                                          "why": why})
        return HTMLResponse("unknown action", status_code=400, headers=_HEADERS)

    async def undo(request: Request) -> Response:
        form = await request.form()
        if not csrf_ok(request, form):
            return forbidden()
        return await decided(request, "review_undo", {"batch": str(form.get("batch", "")),
                                                      "why": str(form.get("why", "")).strip() or None})

    return [Route("/", index, methods=["GET"]), Route("/login", sign_in, methods=["POST"]),
            Route("/logout", sign_out, methods=["POST"]), Route("/decide", decide, methods=["POST"]),
            Route("/undo", undo, methods=["POST"])]


def _refusal(identity: Identity) -> str | None:
    """Why `identity` may not use the page: who may call its listing operation may (ops decides)."""
    op = get(PAGE_OP)
    if refusal(op, identity) is None:
        return None
    article = "an" if op.role[0] in "aeiou" else "a"
    return f"this token's role is {identity.role}; the review page needs {article} {op.role}"


async def _gather(ctx: OpContext, identity: Identity, call_as: CallAs) -> dict[str, Any]:
    """What the page shows, each through its operation: proposals with diffs, deposits, batches, trail."""
    out: dict[str, Any] = {}
    for key, op, params in (("proposals", PAGE_OP, {"diff": True}), ("deposits", "deposits", {}),
                            ("batches", "review_batches", {}), ("trail", "review_trail", {"limit": 30})):
        status, body = await call_as(ctx, identity, op, params)
        out[key] = body.get("result") if status == 200 else []
        if status != 200:
            out.setdefault("errors", []).append(f"{op}: {body.get('error')}")
    return out


def _done(op: str, result: dict) -> str:
    what = {"review_accept": "accepted", "review_reject": "rejected", "review_edit": "accepted as edited",
            "review_undo": "undone"}[op]
    return f"{what} (batch {result.get('batch', '?')})"


def _document(body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>orgkit review</title>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{_STYLE}</style></head>"
            f"<body>{body}</body></html>")


def _csrf(csrf: str) -> str:
    return f'<input type=hidden name=csrf value="{escape(csrf)}">'


def _login(csrf: str, message: str) -> str:
    note = f'<p class="msg">{escape(message)}</p>' if message else ""
    return (f"<h1>orgkit review</h1>{note}<form method=post action=/login id=login>{_csrf(csrf)}"
            "<label>Reviewer token <input type=password name=token autocomplete=off required></label> "
            "<button type=submit>Sign in</button></form>")


def _diff(text: str | None) -> str:
    lines = []
    for line in (text or "").splitlines():
        cls = "add" if line.startswith("+") and not line.startswith("+++") else \
            "del" if line.startswith("-") and not line.startswith("---") else ""
        lines.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return "<pre class=diff>" + "\n".join(lines) + "</pre>"


def _evidence(item: Any) -> str:
    """One piece of a proposal's evidence: the note's title (a link to it) and the passage that matched."""
    if not isinstance(item, dict):
        return escape(str(item))
    name = escape(str(item.get("title") or item.get("file") or item.get("id") or ""))
    if item.get("id"):
        name = f'<a href="/?note={quote(str(item["id"]))}">{name}</a>'
    text = item.get("passage")
    return name + (f": <q>{escape(str(text))}</q>" if text else "")


def _note(note_id: str, body: dict | None) -> str:
    """One note's org text, as the evidence links show it."""
    back = '<p><a href="/">back to the review</a></p>'
    docs = (body or {}).get("result") or []
    if not docs:
        return f"<h1>orgkit review</h1>{back}<p class=msg>no note {escape(note_id)}</p>"
    doc = docs[0]
    return (f"<h1>{escape(str(doc.get('title') or note_id))}</h1>{back}"
            f"<p class=meta>{escape(str(doc.get('file')))}:{escape(str(doc.get('line')))}</p>"
            f"<pre>{escape(str(doc.get('content') or ''))}</pre>")


def _proposal(p: dict, csrf: str) -> str:
    pid = escape(p["id"])
    evidence = "".join(f"<li>{_evidence(e)}</li>" for e in (p.get("evidence") or []))
    field = EDITABLE.get(p["kind"])
    edit = ""
    if field is not None:
        editable = (p.get("payload") or {}).get(field, "")
        edit = (f"<details><summary>Edit, then accept</summary><form method=post action=/decide>{_csrf(csrf)}"
                f"<input type=hidden name=proposal value=\"{pid}\"><input type=hidden name=action value=edit>"
                f"<textarea name=text rows={8 if field in ('body', 'text') else 1} cols=90>{escape(str(editable))}"
                "</textarea><br>"
                "<input name=why placeholder='why (optional)' size=50> <button type=submit>Accept edited</button>"
                "</form></details>")
    error = f"<p class=msg>{escape(p['error'])}</p>" if p.get("error") else ""
    return (f'<div class=proposal id="p-{pid}"><b>{escape(p["kind"])}</b>: {escape(p.get("summary", ""))} '
            f'<span class=meta>({pid})</span>{error}{_diff(p.get("diff"))}'
            + (f"<div class=meta>evidence:<ul>{evidence}</ul></div>" if evidence else "")
            + f"<form method=post action=/decide class=inline>{_csrf(csrf)}"
              f"<input type=hidden name=proposal value=\"{pid}\"><input type=hidden name=action value=accept>"
              "<input name=why placeholder='why (optional)'> <button type=submit name=accept>Accept</button></form>"
              f"<form method=post action=/decide class=inline>{_csrf(csrf)}"
              f"<input type=hidden name=proposal value=\"{pid}\"><input type=hidden name=action value=reject>"
              "<input name=why placeholder='reason' required> <button type=submit name=reject>Reject</button></form>"
            + edit + "</div>")


def _review(identity: Identity, s: dict[str, Any], csrf: str, message: str) -> str:
    deposits = {d["id"]: d for d in s.get("deposits") or []}
    groups: dict[str, list[dict]] = {}
    for p in s.get("proposals") or []:
        groups.setdefault(p["deposit"], []).append(p)
    parts = [f"<h1>orgkit review</h1><p class=meta>signed in as {escape(identity.name)} ({escape(identity.role)}) "
             f"<form method=post action=/logout class=inline>{_csrf(csrf)}<button type=submit>Sign out</button>"
             "</form></p>"]
    if message:
        parts.append(f"<p class=msg id=msg>{escape(message)}</p>")
    parts.extend(f"<p class=msg>{escape(e)}</p>" for e in s.get("errors", []))
    parts.append("<h2>Pending proposals</h2>")
    if not groups:
        parts.append("<p>Nothing waits for review.</p>")
    for dep_id, proposals in groups.items():
        dep = deposits.get(dep_id, {})
        parts.append(f'<section class=deposit id="d-{escape(dep_id)}"><h3>{escape(dep.get("title", dep_id))}</h3>'
                     f'<p class=meta>deposit {escape(dep_id)} · {escape(str(dep.get("path", "")))} · '
                     f'{escape(str(dep.get("lane", "")))} · by {escape(str(dep.get("actor", "")))}</p>'
                     + "".join(_proposal(p, csrf) for p in proposals) + "</section>")
    parts.append("<h2>Recent batches</h2><table><tr><th>what it did</th><th>state</th><th>by</th>"
                 "<th>at</th><th>batch</th><th></th></tr>")
    for b in reversed((s.get("batches") or [])[-15:]):
        can_undo = b["state"] == "applied" and not b.get("undone_by") and b["action"] != "undo"
        button = (f"<form method=post action=/undo class=inline>{_csrf(csrf)}"
                  f"<input type=hidden name=batch value=\"{escape(b['id'])}\"><button type=submit>Undo</button>"
                  "</form>") if can_undo else ""
        parts.append(f"<tr><td>{escape(b.get('title') or b['action'])}</td><td>{escape(b['state'])}</td>"
                     f"<td>{escape(b['actor'])}</td><td>{escape(b['at'])}</td><td class=meta>{escape(b['id'])}</td>"
                     f"<td>{button}</td></tr>")
    parts.append("</table><h2>Audit trail</h2><table><tr><th>at</th><th>who</th><th>what</th><th>subject</th></tr>")
    for r in s.get("trail") or []:
        parts.append(f"<tr><td>{escape(r['at'])}</td><td>{escape(r['actor'])}</td><td>{escape(r['action'])}</td>"
                     f"<td>{escape(str(r.get('subject') or ''))}</td></tr>")
    parts.append("</table>")
    return "".join(parts)

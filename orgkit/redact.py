"""Secrets kept out of everything orgkit prints: one redaction for every output, error and log.

A database URL (and whatever libpq says about it) can carry a password in
several places: the userinfo (`postgresql://user:pw@host`), a query
parameter (`?password=pw`, `?sslpassword=pw`, also percent-encoded, as in
`?pass%77ord=pw`), or a keyword/value connection string (`host=x
password='p w'`, where a quoted value may hold spaces). `redact` masks each
of them wherever it stands in a text, so a line naming the URL, a config
value and an error all go through the same function. libpq also echoes a bad
value on its own (`invalid percent-encoded token: "pw%"`), with no key to
recognise it by: given the connection string the text is about (`source`),
every secret found in it is masked in the text too, however libpq quotes it.

It lives at the bottom (no imports from orgkit), so the config, the errors
and the storage layer use it without importing one another.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"
# `scheme://user:` then the password, up to the `@` that ends the host part: libpq reads the
# userinfo up to an `@` before any `/`, spaces and quotes included; a password with an unencoded
# `@` is masked whole (too much is masked rather than too little).
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:@/'\"]*:)"
                       r"(?P<secret>(?:[^/@\n]|@(?=[^/\s]*@))*)(?=@)")
# A value quoted in either quote (libpq's conninfo uses '...' with \' and \\ inside; a "..." is
# masked whole too), unterminated up to the end of the line.
_QUOTED = r"'(?:[^'\\\n]|\\.)*(?:'|$)|\"(?:[^\"\\\n]|\\.)*(?:\"|$)"
# A URL query parameter: its value is quoted, or ends at `&`, `#`, a space or the end of the URL
# (a `:` ending a URL in a sentence is the sentence's).
_QUERY = re.compile(rf"(?P<head>[?&](?P<key>[A-Za-z0-9_.%-]+)=)(?P<secret>{_QUOTED}|[^\s&#]*?(?=[\s&#]|:\s|:$|$))",
                    re.M)
# A keyword = value pair of a connection string: a value is quoted or runs to the next space.
_KEYWORD = re.compile(r"(?P<head>(?<![\w%?&.-])(?P<key>[A-Za-z0-9_%]+)\s*=\s*)"
                      rf"(?P<secret>{_QUOTED}|[^\s'\"]+)", re.M)
# Passwords, and what leads to one: a password file, a service (its file holds one), a client
# key (and the password that unlocks it).
_SECRET_KEY = re.compile(r"(?i)(ssl)?pass|pw|passfile|service(file)?|sslkey|"
                         r".*(password|passwd|secret|token|api_?key).*")


def _is_secret(key: str) -> bool:
    """Whether a parameter named `key` (percent-encoded or not) holds a secret: password, sslpassword, ..."""
    return bool(_SECRET_KEY.fullmatch(unquote(key)))


def _found(text: str) -> list[str]:
    """Every secret value in `text`, as written and as libpq reads it (percent-decoded, unquoted)."""
    values = [m.group("secret") for m in _USERINFO.finditer(text)]
    values += [m.group("secret") for pattern in (_QUERY, _KEYWORD) for m in pattern.finditer(text)
               if _is_secret(m.group("key"))]
    out = set()
    for value in values:
        bare = value[1:].removesuffix(value[0]) if value[:1] in ("'", '"') else value
        out |= {value, bare, unquote(value), re.sub(r"\\(.)", r"\1", bare)}
    return sorted((v for v in out if v and v != MASK), key=len, reverse=True)


def redact(text: str, source: str | None = None) -> str:
    """`text` with every password it (or the connection string `source` it is about) carries as `***`."""
    if source:
        for value in _found(source):
            if len(value) >= 4:
                text = text.replace(value, MASK)
            else:  # a very short secret: only where it stands alone
                text = re.sub(rf"(?<![\w]){re.escape(value)}(?![\w])", MASK, text)
    text = _USERINFO.sub(lambda m: m.group("head") + MASK, text)
    for pattern in (_QUERY, _KEYWORD):
        text = pattern.sub(lambda m: m.group("head") + MASK if _is_secret(m.group("key")) else m.group(), text)
    return text


# Hosts, for a caller who may not see the machine (ops/shown.py): a URL's host, and the database's
# however libpq names it.
HIDDEN = "(hidden)"
URL_HOST = re.compile(r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<host>[^/\s?#'\"]+)")
_DATABASE_HOST = re.compile(r"\b(?P<scheme>postgres(?:ql)?://)(?P<host>[^/\s?#'\"]+)", re.I)
# How libpq names a host in its messages: `failed to resolve host 'h'`, `could not translate host name "h"`,
# `connection to server at "h" (10.0.0.5), port 5432 failed`, `... on socket "/run/postgresql/..."`.
_LIBPQ_HOST = re.compile(r"(?i)(?P<head>\b(?:host(?: name)?|server at|server on socket)\s+)(?P<q>[\"'])[^\"']*(?P=q)"
                         r"(?P<ip>\s*\([0-9a-f.:]+\))?")
_HOST_KEY = re.compile(r"(?i)(?<![\w])(?P<key>host|hostaddr)(?P<eq>\s*=\s*)(?P<host>'[^']*'|[^\s&#'\"]+)")


def without_hosts(text: str, pattern: re.Pattern = _DATABASE_HOST) -> str:
    """`text` with the host of every database URL (with `URL_HOST`: every URL) and `host=` masked."""
    text = pattern.sub(lambda m: m.group("scheme") + HIDDEN, text)
    text = _LIBPQ_HOST.sub(lambda m: m.group("head") + HIDDEN, text)
    return _HOST_KEY.sub(lambda m: m.group("key") + m.group("eq") + HIDDEN, text)

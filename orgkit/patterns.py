"""A caller's regular expression, compiled for a linear-time engine (RE2), never Python's `re`.

Python's `re` backtracks: `(a+)+$` against a long run of `a` takes longer than
the universe, and it holds the interpreter while it does, so one reader's
`scan --regex` would stop a whole server. RE2 matches in time linear in the
text, and refuses at compile time what it cannot do so (backreferences,
lookaround) or what would be too large (`a{1000}{1000}`, an alternation past
its memory budget): such a pattern gets one line saying why. ripgrep, which
finds the candidate lines, is linear too. The `re2` module loads only when a
pattern is compiled, so the command line starts as fast as before.
"""

from __future__ import annotations

from typing import Any

from .errors import OrgkitError

MAX_MEMORY = 8 << 20  # bytes RE2 may use for one compiled pattern (its own default): past it, refused


def linear(pattern: str, *, ignore_case: bool = False) -> Any:
    """`pattern` compiled by RE2 (`search` and `match` as `re` has them), or an OrgkitError in one line."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    options.max_mem = MAX_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        shown = pattern if len(pattern) <= 80 else pattern[:80] + "..."
        raise OrgkitError(f"invalid regex {shown!r}: {reason} (patterns run on a linear-time engine: no "
                          "backreferences or lookaround, and bounded repetition)") from None

"""Who calls, and what their role lets them do: every call to an operation names its caller.

Roles are ordered; each can do what the ones before it can:
reader (read operations and recall) < agent (+ deposit) < reviewer (+ review
decisions and undo) < admin (+ index, tangle, tokens, everything else).

A call never goes without a caller (`ops.call` refuses one). The team
server's callers are the identities of their tokens (orgkit.tokens); the two
local callers have none and are named here, so no surface is open by omission:

- `OWNER`, the user at the command line: every role, and the only caller whose
  header Lisp may reach the machine (environment, files, clock), as Emacs does
  for its user.
- `STDIO`, the client of `orgkit serve` or `orgkit mcp` on a pipe the user
  started: every role (as these servers always offered), but a server's
  caller all the same (paths confined to the notes, the reader's view of the
  machine, nothing of the machine in header Lisp, no command-line-only
  operation).

This module imports nothing, so the operation declarations can check their
roles against it without loading the token stores.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLES = ("reader", "agent", "reviewer", "admin")


@dataclass(frozen=True)
class Identity:
    """A caller: a verified token's name and role, or one of the two local callers (`local`).

    A local caller has no token behind its name: what it records is done as the
    login user (and the surface), not as "owner" or "stdio".
    """

    name: str
    role: str
    local: bool = False

    def may(self, role: str) -> bool:
        """Whether this caller's role includes `role`; a role that is not one of ROLES (a stored
        record naming another) includes nothing and is included by nothing."""
        return self.role in ROLES and role in ROLES and ROLES.index(self.role) >= ROLES.index(role)


OWNER = Identity("owner", "admin", local=True)
STDIO = Identity("stdio", "admin", local=True)


def token_of(identity: Identity | None) -> Identity | None:
    """`identity` when it is a verified token's (the team server's caller), None for a local caller
    or none: what a token's caller does is recorded under its name, and only its role narrows a view."""
    return identity if identity is not None and not identity.local else None


def reaches_machine(identity: Identity | None) -> bool:
    """Whether `identity` may have header Lisp read the environment, the files and the clock:
    only the owner at the command line. Every server's caller, stdio's too, may not."""
    return identity == OWNER

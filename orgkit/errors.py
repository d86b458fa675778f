"""Errors that reach the user as one line (exit status 1), never as a traceback."""


class OrgkitError(Exception):
    """A user-facing failure: bad input, a missing directory, an unknown ID."""


class NotFound(OrgkitError):
    """Something asked for by name or ID does not exist."""

"""Errors that reach the user as one line (exit status 1), never as a traceback."""

from contextlib import contextmanager
from typing import Iterator

from .redact import redact

# What reading a stored record that orgkit did not write raises: JSON that is not, a value of
# another type, a key or an item that is not there.
MALFORMED = (ValueError, TypeError, KeyError, AttributeError, IndexError)


def first_line(exc: BaseException) -> str:
    """An exception's message cut to its first line (its type's name when it has none), for a one-line error."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class OrgkitError(Exception):
    """A user-facing failure: bad input, a missing directory, an unknown ID."""


class NotFound(OrgkitError):
    """Something asked for by name or ID does not exist."""


class BadParameter(OrgkitError):
    """A parameter's value is refused. The message starts with the parameter's name
    (`param`, then `rest`): each surface writes that name its own way (`--path` on the
    command line, `path` elsewhere), which ops.call does, so no check names a flag."""

    def __init__(self, param: str, rest: str) -> None:
        super().__init__(param + rest)
        self.param, self.rest = param, rest


class Refused(OrgkitError):
    """The caller's role does not allow what it asked (ops.call decides, for every surface)."""


class Unavailable(OrgkitError):
    """The call could not be served now (busy, past its deadline): the same call may work later."""


class TooMany(OrgkitError):
    """A caller spent its rate (ops/rates.py): the same call works after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DatabaseUnavailable(Unavailable):
    """The database cannot be reached (down, restarting, the connection lost): try again later.

    The connection that failed is dropped, so the next call connects afresh; the
    team server answers 503 meanwhile.
    """


@contextmanager
def stored_records(what: str) -> Iterator[None]:
    """Read back `what` (an extraction run, the memory store: data that travels with the notes or
    that other writers share): a record not as orgkit writes it stops the work in one line."""
    try:
        yield
    except OrgkitError:
        raise
    except MALFORMED as exc:
        raise OrgkitError(f"{what} holds a record not as orgkit writes it ({type(exc).__name__}: "
                          f"{first_line(exc)[:200]}); stopped, the record is left as it is") from None


def say(exc: BaseException, limit: int = 2000) -> str:
    """A failure as one line of at most about `limit` characters: what a user or a client reads.

    A file system error names the file; a value echoed back (a 100,000-character
    ID) is cut, so the line stays a line; a password in it is masked (orgkit.redact).
    """
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename is not None else exc.strerror
    elif isinstance(exc, RecursionError):
        text = "nested too deeply to handle"
    else:
        text = str(exc)
    text = redact(" ".join(text.splitlines()))
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"

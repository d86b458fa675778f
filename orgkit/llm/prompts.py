"""Personas: the system prompt of each role, kept as org files.

The package ships one org file per role in `orgkit/llm/prompts/ROLE.org`; a
notes directory overrides any of them with `NOTES/personas/ROLE.org`, so the
wording a model gets is a note the user can read, edit and version. The
persona is the file's text after its `#+` keywords and top property drawer.
A file there that is a deposit no person has admitted is no persona: the
package's is used. The memory flow knows which files those are; the
operations layer hands that knowledge in (`instructions.deposits_waiting`),
as this layer may not ask the memory flow itself.

Every prompt actually sent can be watched (`--show-prompt`): `watch_prompts`
registers a callback that sees each request's messages before it goes out.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Callable, Iterator

from ..config import Config
from ..errors import OrgkitError
from ..instructions import PERSONAS_DIR, deposits_waiting
from ..org.drawers import body_text

PACKAGE_DIR = Path(__file__).with_name("prompts")

Watcher = Callable[[str, str, list[dict]], None]  # (role, model description, messages)
_watchers: list[Watcher] = []
_watch_lock = threading.Lock()


def persona_path(config: Config | None, role: str) -> Path:
    """The persona file a role uses: the notes dir's override, else the package's."""
    if config is not None:
        local = config.notes / PERSONAS_DIR / f"{role}.org"
        if local.is_file() and f"{PERSONAS_DIR}/{role}.org" not in deposits_waiting(config):
            return local
    return PACKAGE_DIR / f"{role}.org"


def persona(config: Config | None, role: str) -> str:
    """The system prompt for `role` (an OrgkitError when no persona file exists)."""
    path = persona_path(config, role)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise OrgkitError(f"no persona for the {role}: {path} is missing") from None
    return body_text(text)


@contextlib.contextmanager
def watch_prompts(watcher: Watcher) -> Iterator[None]:
    """Call `watcher` with every request sent while the block runs (any thread)."""
    with _watch_lock:
        _watchers.append(watcher)
    try:
        yield
    finally:
        with _watch_lock:
            _watchers.remove(watcher)


def announce(role: str, model: str, messages: list[dict]) -> None:
    """Tell every watcher about a request that is about to be sent."""
    with _watch_lock:
        current = list(_watchers)
    for watcher in current:
        watcher(role, model, messages)


def format_prompt(role: str, model: str, messages: list[dict]) -> str:
    """A request as `--show-prompt` prints it: a header, then each message."""
    parts = [f"===== prompt to the {role} ({model}) ====="]
    for message in messages:
        parts.append(f"--- {message['role']} ---\n{message['content']}")
    return "\n".join(parts) + "\n"

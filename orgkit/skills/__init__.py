"""Skills: small, named procedures an agent or a person can run over the notes.

The modules whose names match a literate note in `skills/` (e.g.
`atomic_notes.py` from `skills/atomic-notes.org`) are tangled from it: edit the
note, then run `python tangle.py`.
"""

from .model import Capability, Prompt, Request, Skill
from .registry import Registry, load_registry

__all__ = ["Capability", "Prompt", "Registry", "Request", "Skill", "load_registry"]

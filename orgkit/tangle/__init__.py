"""An org-babel-compatible tangler: the files `org-babel-tangle-file` writes, byte for byte.

`plan_file` computes the targets of one org file, `tangle` writes the targets
of several files atomically, `check` compares them with what is on disk, and
`detangle` carries edits in tangled code back into the org blocks.
"""

from __future__ import annotations

from .api import CheckResult, TangleResult, check, plan, tangle
from .detangle import DetangleResult, detangle
from .errors import NeedsEvaluation, TangleError
from .plan import Options, Target, plan_file

__all__ = [
    "CheckResult",
    "DetangleResult",
    "NeedsEvaluation",
    "Options",
    "TangleError",
    "TangleResult",
    "Target",
    "check",
    "detangle",
    "plan",
    "plan_file",
    "tangle",
]

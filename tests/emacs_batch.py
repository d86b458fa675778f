"""How the tests start batch Emacs: no init file, and garbage collected every 64 MiB.

Emacs' default threshold (800 kB) has a batch run over many files spend most of
its time collecting: org-roam's database over braindump took 9.1 s of CPU, 3.8 s
with 64 MiB (at 133 MB resident); the org-mode syntax table scan 2.8 s, 0.8 s.
The threshold decides when memory is reclaimed, never what a program computes.
"""

from __future__ import annotations

GC_THRESHOLD = "(setq gc-cons-threshold (* 64 1024 1024))"


def batch_emacs(*args: str, init: str = "-q") -> list[str]:
    """The command line of a batch Emacs run with ARGS (`init` -Q for no site files either)."""
    return ["emacs", "--batch", init, "--eval", GC_THRESHOLD, *args]

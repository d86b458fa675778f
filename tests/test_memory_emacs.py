"""`M-x orgkit-review` in real Emacs against the real orgkit (editors/test/orgkit-review-test.el)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EMACS = shutil.which("emacs")

pytestmark = pytest.mark.skipif(EMACS is None, reason="emacs is not installed (apt-get install -y emacs-nox)")


def test_review_buffer_accepts_edits_rejects_and_undoes(tmp_path: Path, tiny_model) -> None:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["HOME"] = str(tmp_path)
    for name in list(env):
        if name in ("ORGKIT_NOTES", "ORGKIT_STATE_DIR", "EMACSLOADPATH") or name.startswith("ORGKIT_LLM"):
            env.pop(name)
    done = subprocess.run([EMACS, "--batch", "-q", "-l", "ert", "-l", str(ROOT / "editors" / "orgkit.el"),
                           "-l", str(ROOT / "editors" / "test" / "orgkit-review-test.el"),
                           "-f", "ert-run-tests-batch-and-exit"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    output = done.stdout + done.stderr
    summary = re.search(r"^Ran (\d+) tests?, (\d+) results? as expected", output, re.M)
    assert done.returncode == 0 and summary and summary.group(1) == summary.group(2), output

"""editors/orgkit.el in real Emacs: a clean byte-compile and the ERT suite.

The ERT suite (editors/test/orgkit-test.el) builds its own notes directory and
drives every command against the `orgkit` console script of this interpreter,
over `orgkit serve` and over the one-shot command line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from emacs_batch import batch_emacs

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "editors" / "orgkit.el"
SUITE = ROOT / "editors" / "test" / "orgkit-test.el"
EMACS = shutil.which("emacs")

pytestmark = pytest.mark.skipif(
    EMACS is None, reason="emacs is not installed (apt-get install -y emacs-nox)"
)


def _env(home: Path) -> dict[str, str]:
    """This interpreter's `orgkit` first on PATH; a throwaway HOME; no ambient notes."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["HOME"] = str(home)
    for name in ("ORGKIT_NOTES", "ORGKIT_STATE_DIR", "EMACSLOADPATH"):
        env.pop(name, None)
    return env


def _run(args: list[str], tmp_path: Path, timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        batch_emacs(*args),
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=timeout,
    )


def test_byte_compiles_without_warnings(tmp_path: Path) -> None:
    source = tmp_path / "orgkit.el"
    shutil.copy(PACKAGE, source)
    done = _run(["--eval", "(setq byte-compile-error-on-warn t)",
                 "-f", "batch-byte-compile", str(source)], tmp_path)
    output = done.stdout + done.stderr
    complaints = [line for line in output.splitlines()
                  if re.search(r"\b(Warning|Error)\b", line)]
    assert done.returncode == 0 and not complaints, f"byte-compile of orgkit.el:\n{output}"
    assert (tmp_path / "orgkit.elc").exists()


def test_ert_suite_passes(tmp_path: Path) -> None:
    done = _run(["-l", "ert", "-l", str(PACKAGE), "-l", str(SUITE),
                 "-f", "ert-run-tests-batch-and-exit"], tmp_path)
    output = done.stdout + done.stderr
    summary = re.search(r"^Ran (\d+) tests?, (\d+) results? as expected", output, re.M)
    assert done.returncode == 0 and summary, f"ERT suite of orgkit.el failed:\n{output}"
    assert int(summary.group(1)) >= 10, output

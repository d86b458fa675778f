"""Re-tangle the literate skill notes: `python tangle.py [FILE.org...]`.

Runs from a source checkout without installing orgkit: with no arguments it
tangles every `.org` file under `skills/`, exactly as Emacs'
`org-babel-tangle-file` would.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from orgkit.errors import OrgkitError  # noqa: E402
from orgkit.tangle import tangle  # noqa: E402


def main(argv: list[str]) -> int:
    """Tangle the given org files (default: skills/**/*.org); 0 on success, 1 on error."""
    files = [Path(a) for a in argv] or sorted((ROOT / "skills").rglob("*.org"))
    if not files:
        print("tangle.py: no .org files in skills/", file=sys.stderr)
        return 1
    try:
        result = tangle(files)
    except OrgkitError as exc:
        print(f"tangle.py: error: {exc}", file=sys.stderr)
        return 1
    for message in result.kept:
        print(f"tangle.py: {message}", file=sys.stderr)
    for target in result.targets:
        print(f"wrote {target.path} ({len(target.content)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

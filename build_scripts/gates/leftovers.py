"""`make lint`: no merge or patch leftover is committed.

``git merge`` with a conflict tool and ``patch`` leave ``x.orig`` (the file before) and
``x.rej`` (the hunks that did not apply) beside ``x``; ``git add -A`` then commits them, and
a stale copy of a module sits in the tree unseen (issue 23 found one). This gate lists the
tracked files (committed or staged) with those suffixes and fails naming them.

Usage: python -m build_scripts.gates.leftovers [repository]   (exit 1 when any is found)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PATTERNS = ("*.orig", "*.rej")
REPO = Path(__file__).resolve().parents[2]


class LeftoversError(RuntimeError):
    """``git ls-files`` could not list the repository's files."""


def leftovers(repo: Path = REPO) -> list[str]:
    """The tracked files of the git work tree ``repo`` matching ``PATTERNS``, sorted.
    LeftoversError when ``repo`` is not a git work tree (or git is missing)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", *PATTERNS], cwd=repo, capture_output=True
        )
    except OSError as err:
        raise LeftoversError(f"cannot run git ({err}): install git") from None
    if out.returncode != 0:
        why = out.stderr.decode("utf-8", "replace").strip()
        raise LeftoversError(f"{repo} is not a git work tree ({why}): run it in a checkout")
    return sorted(name for name in out.stdout.decode("utf-8").split("\0") if name)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        found = leftovers(Path(args[0]) if args else REPO)
    except LeftoversError as err:
        print(f"leftovers: {err}", file=sys.stderr)
        return 1
    for name in found:
        print(
            f"leftovers: {name}: a merge or patch leftover is tracked: look at what it held, "
            f"then `git rm {name}`",
            file=sys.stderr,
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

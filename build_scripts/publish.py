"""``make publish``'s first step: refuse an unset or local SITE_URL before building.

    python -m build_scripts.publish --public URL   # prints the site_url, or exit 1 saying why

The rules are build_scripts/hooks/site_url.py's (a module of the MkDocs hook package,
which ``python -m`` cannot run without importing it twice)."""

from __future__ import annotations

import sys

from build_scripts.hooks.site_url import main

if __name__ == "__main__":
    sys.exit(main())

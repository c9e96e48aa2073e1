"""``python -m build_scripts.precompute``: see build_scripts/precompute/cli.py."""

import sys

from .cli import main

sys.exit(main())

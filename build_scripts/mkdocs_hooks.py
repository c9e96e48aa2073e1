"""The one MkDocs hook entry of mkdocs.yml (``hooks: [build_scripts/mkdocs_hooks.py]``).

MkDocs loads this file by its path; it puts the repository root on sys.path (MkDocs keeps
it there only while it loads the entry, long enough for the imports) and imports the hook
package as ``build_scripts.hooks``, the name tests use too, so the package may import the
rest of build_scripts. Everything the build does to pages is there (hooks/__init__.py).

The events are one ``SiteHooks`` instance's, made each time mkdocs.yml is loaded: the
build's state lives on it, not in module globals.
"""

import sys
from pathlib import Path

# First, so that this checkout's build_scripts is the one imported (a project copy's own).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from build_scripts.hooks import SiteHooks  # noqa: E402

_site = SiteHooks()
on_config = _site.on_config
on_files = _site.on_files
on_page_markdown = _site.on_page_markdown
on_page_content = _site.on_page_content
on_page_context = _site.on_page_context
on_post_page = _site.on_post_page
on_post_template = _site.on_post_template
on_post_build = _site.on_post_build

"""The one MkDocs hook entry of mkdocs.yml (``hooks: [build_scripts/mkdocs_hooks.py]``).

MkDocs puts this file's folder on sys.path while it loads it (``Hooks._load_hook``), so the
package next to it, build_scripts/hooks/, imports as ``hooks``; its modules import each
other relatively. Everything the build does to pages is there (hooks/__init__.py).
"""

from hooks import (  # noqa: F401
    on_config,
    on_page_content,
    on_page_markdown,
    on_post_build,
    on_post_page,
)

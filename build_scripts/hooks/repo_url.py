"""Edit links: Material's "Edit this page" button, from the deployment's repository.

``REPO_URL`` in the environment (the Pages workflow sets it from the GitHub repository, as it
sets ``SITE_URL``: ``https://github.com/owner/repo``) becomes MkDocs' ``repo_url``, with
``repo_name`` ``owner/repo`` and ``edit_uri`` ``edit/<REPO_BRANCH>/docs/`` (``REPO_BRANCH``
defaults to ``main``): every page, a companion notebook's too (its ``docs/notebooks/*.py``),
then has an edit button (``content.action.edit`` in mkdocs.yml) opening its source file in
GitHub's editor, and the header links the repository. Without ``REPO_URL`` (``make build``,
``make serve``, the tests) there is no repository link, no edit button and no error.

The header's repository link is a plain link (overrides/partials/source.html): Material's
own would ask GitHub's API for the repository's stars and forks, a request to another host,
which the site never makes.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from mkdocs.exceptions import PluginError

ENV = "REPO_URL"
BRANCH_ENV = "REPO_BRANCH"
DEFAULT_BRANCH = "main"


def from_environment(environ=os.environ) -> dict | None:
    """The config keys for ``REPO_URL`` (and ``REPO_BRANCH``), or None when it is unset or
    empty. PluginError, saying what to pass, for a value that is not a repository's address."""
    value = environ.get(ENV, "").strip()
    if not value:
        return None
    parts = urlsplit(value)
    path = parts.path.strip("/").removesuffix(".git")
    if parts.scheme not in ("http", "https") or not parts.netloc or path.count("/") != 1:
        raise PluginError(
            f"{ENV}={value!r} is not a repository's address: pass e.g. "
            "https://github.com/owner/repo (the Pages workflow passes its own repository)"
        )
    if parts.query or parts.fragment:
        raise PluginError(f"{ENV}={value!r} has a query or fragment: pass the repository's address")
    branch = environ.get(BRANCH_ENV, "").strip() or DEFAULT_BRANCH
    return {
        "repo_url": f"{parts.scheme}://{parts.netloc}/{path}/",
        "repo_name": path,
        "edit_uri": f"edit/{branch}/docs/",
    }


def configure(config, environ=os.environ) -> None:
    """on_config: set ``repo_url``, ``repo_name`` and ``edit_uri`` from ``REPO_URL`` when the
    environment has it; otherwise no repository and no edit link (``edit_uri`` empty)."""
    keys = from_environment(environ)
    if keys is None:
        config["repo_url"] = None
        config["edit_uri"] = ""
        return
    for key, value in keys.items():
        config[key] = value

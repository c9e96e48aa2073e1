"""The address a build is published at (MkDocs' ``site_url``), from the deployment.

``SITE_URL`` in the environment (``make publish SITE_URL=https://user.github.io/repo/``,
or the Pages workflow) overrides mkdocs.yml's ``http://127.0.0.1:8000/``, which is only
right for ``make serve``. Material's instant navigation intercepts only the links listed in
``sitemap.xml``, which is written from ``site_url``; the 404 page's links are absolute paths
under it. So a site published with the wrong ``site_url`` reloads on every click and shows a
404 page without styles under a sub-path.

    python -m build_scripts.publish --public URL   # exit 1 with a message unless publishable
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from urllib.parse import urlsplit

from mkdocs.exceptions import PluginError

ENV = "SITE_URL"
LOCAL_HOSTS = ("localhost", "localhost.localdomain", "")


class SiteUrlError(ValueError):
    """A site_url that cannot be used; the message says what to pass instead."""


def normalise(value: str, what: str = ENV) -> str:
    """``value`` as a site_url: an absolute http(s) URL without query or fragment, ending
    in "/" (added if missing). Raises SiteUrlError naming ``what`` otherwise."""
    url = value.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SiteUrlError(
            f"{what}={value!r} is not an absolute http(s) URL: pass the address readers open, "
            "e.g. https://user.github.io/repo/"
        )
    if parts.query or parts.fragment:
        raise SiteUrlError(f"{what}={value!r} has a query or fragment: pass the site's folder")
    return url if url.endswith("/") else url + "/"


def is_local(url: str) -> bool:
    """True for a loopback or unspecified host (127.0.0.1, localhost, ::1, 0.0.0.0)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in LOCAL_HOSTS or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def public(value: str | None) -> str:
    """``value`` normalised, for a published build: refuses an unset or local address."""
    if not value or not value.strip():
        raise SiteUrlError(
            f"{ENV} is not set: a published site needs the address readers open, e.g. "
            "make publish SITE_URL=https://user.github.io/repo/ (without it every link is a "
            "full reload and the 404 page breaks under a sub-path)"
        )
    url = normalise(value)
    if is_local(url):
        raise SiteUrlError(
            f"{ENV}={value!r} is this machine's address: a published build needs the host "
            "readers reach, e.g. https://user.github.io/repo/ (make build is the local build)"
        )
    return url


def from_environment(environ=os.environ) -> str | None:
    """The normalised ``SITE_URL`` of the environment, or None when it is unset or empty."""
    value = environ.get(ENV, "")
    return normalise(value) if value.strip() else None


def configure(config, environ=os.environ) -> None:
    """on_config: set ``config["site_url"]`` from ``SITE_URL`` when the environment has it."""
    try:
        url = from_environment(environ)
    except SiteUrlError as err:
        raise PluginError(str(err)) from None
    if url is not None:
        config["site_url"] = url


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--public", metavar="URL", required=True, help="the address to check")
    args = parser.parse_args(argv)
    try:
        print(public(args.public))
    except SiteUrlError as err:
        print(f"publish: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

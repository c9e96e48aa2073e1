"""Publishing: SITE_URL from the deployment (build_scripts/hooks/site_url.py, make publish),
the third-party notices made at vendor time (build_scripts/vendor/notices.py), the 404 page
and the CI workflows (.github/workflows/, checked against GitHub's workflow schema)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml
from helpers import MKDOCS, ROOT, SITE, VENDOR

from build_scripts.hooks import site_url

WORKFLOWS = ROOT / ".github" / "workflows"


# --------------------------------------------------------------------------- SITE_URL


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("https://user.github.io/repo", "https://user.github.io/repo/"),
        ("https://user.github.io/repo/", "https://user.github.io/repo/"),
        (" https://example.org/ ", "https://example.org/"),
    ],
)
def test_public_site_url_is_normalised(value, want):
    assert site_url.public(value) == want


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "SITE_URL is not set"),
        ("http://127.0.0.1:8000/", "this machine's address"),
        ("http://localhost:8000/repo/", "this machine's address"),
        ("http://[::1]/", "this machine's address"),
        ("user.github.io/repo", "not an absolute http(s) URL"),
        ("https://x.org/?a=1", "query or fragment"),
    ],
)
def test_publishing_refuses_a_missing_or_local_address_saying_what_to_pass(value, says):
    with pytest.raises(site_url.SiteUrlError, match=re.escape(says)):
        site_url.public(value)


def test_the_hook_sets_site_url_only_from_a_set_environment_variable():
    config = {"site_url": "http://127.0.0.1:8000/"}
    site_url.configure(config, environ={})
    assert config["site_url"] == "http://127.0.0.1:8000/"
    site_url.configure(config, environ={"SITE_URL": "http://127.0.0.1:9/sub"})
    assert config["site_url"] == "http://127.0.0.1:9/sub/"  # any address for a local build
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match="not an absolute"):
        site_url.configure(config, environ={"SITE_URL": "sub/"})


def test_make_publish_refuses_without_site_url_before_building():
    cmd = [sys.executable, "-m", "build_scripts.publish", "--public", ""]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "make publish SITE_URL=https://user.github.io/repo/" in proc.stderr
    makefile = (ROOT / "Makefile").read_text("utf-8")
    recipe = makefile.split("\npublish:", 1)[1].split("\n\n", 1)[0]
    # the address is checked first (before vendoring), then the build gets it
    assert recipe.startswith(" publish-address vendor wheel\n")
    assert 'SITE_URL="$(SITE_URL)" $(BIN)/mkdocs build --strict' in recipe
    check = makefile.split("\npublish-address:", 1)[1].split("\n\n", 1)[0]
    assert 'build_scripts.publish --public "$(SITE_URL)"' in check


def test_the_local_build_keeps_the_local_address():
    sitemap = (SITE / "sitemap.xml").read_text("utf-8")
    assert "<loc>http://127.0.0.1:8000/</loc>" in sitemap


# --------------------------------------------------------------------------- notices


def test_notices_hold_every_vendored_package_with_its_own_licence_text():
    from build_scripts.vendor.vendor import load_lock

    text = (VENDOR / "notices" / "notices.md").read_text("utf-8")
    lock = load_lock()
    for pkg in lock["packages"]:
        if pkg["source"]["type"] == "npm":
            assert f"### {pkg['name']} {pkg['version']}" in text, pkg["name"]
    for name in ("numpy 2.0.2", "@codemirror/view", "@lezer/python", "mkdocs-material 9.8.1"):
        assert f"### {name}" in text, name
    assert "esbuild" not in text.split("### ")[0] and "### esbuild" not in text
    # real texts, from the archives: KaTeX's MIT licence, NumPy's BSD licence
    katex = text.split("### katex")[1].split("\n### ")[0]
    assert "Permission is hereby granted, free of charge" in katex
    numpy = text.split("### numpy")[1].split("\n### ")[0]
    assert "Licence: `BSD License`" in numpy and "NumPy Developers" in numpy
    pyodide = text.split("### pyodide")[1].split("\n### ")[0]
    assert "`MPL-2.0`" in pyodide and "carries no licence file" in pyodide


def test_notices_are_the_same_bytes_on_every_run(tmp_path):
    from build_scripts.vendor import notices
    from build_scripts.vendor.vendor import DEFAULT_CACHE, fetch_source, load_lock

    dest = tmp_path / "vendor"
    (dest / "pyodide").mkdir(parents=True)
    for wheel in (VENDOR / "pyodide").glob("numpy-*.whl"):
        (dest / "pyodide" / wheel.name).symlink_to(wheel)
    lines: list[str] = []
    assert notices.write(load_lock(), dest, DEFAULT_CACHE, fetch=fetch_source, log=lines.append)
    for name in (notices.MARKDOWN, notices.TEXT):
        assert (dest / "notices" / name).read_bytes() == (VENDOR / "notices" / name).read_bytes()
    assert not notices.write(load_lock(), dest, DEFAULT_CACHE, fetch=fetch_source, log=print)
    assert re.search(r"third-party notices of \d+ packages", lines[0])


def test_notices_page_is_built_and_linked_from_about_and_every_footer():
    page = (SITE / "third-party-notices" / "index.html").read_text("utf-8")
    assert "Permission is hereby granted" in page and "Apache License 2.0" in page
    assert (SITE / "vendor" / "notices" / "THIRD-PARTY-NOTICES.txt").is_file()
    assert not (SITE / "vendor" / "notices" / "notices.md").exists()  # a fragment, not a page
    about = (SITE / "about" / "index.html").read_text("utf-8")
    assert 'href="../third-party-notices/"' in about
    lesson = (SITE / "lessons" / "03-attention-pattern" / "index.html").read_text("utf-8")
    assert 'href="../../third-party-notices/">Third-party notices</a>' in lesson


# --------------------------------------------------------------------------- 404 and storage


def test_404_page_links_home_and_every_lesson():
    page = (SITE / "404.html").read_text("utf-8")
    assert "Page not found" in page
    lessons = sorted(p.stem for p in (ROOT / "docs" / "lessons").glob("[0-9][0-9]-*.md"))
    for stem in lessons:
        assert f'href="/lessons/{stem}/"' in page, stem
    assert 'href="/"' in page


def test_every_page_installs_the_storage_shim_before_materials_scripts():
    page = (SITE / "index.html").read_text("utf-8")
    shim = page.index('["localStorage","sessionStorage"]')
    assert shim < page.index("__md_get")


# --------------------------------------------------------------------------- workflows


def load_workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text("utf-8"))


def test_workflows_pass_the_workflow_schema():
    checker = ROOT / ".venv" / "bin" / "check-jsonschema"
    if not checker.exists():
        checker = MKDOCS.with_name("check-jsonschema")
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert len(files) == 2
    cmd = [str(checker), "--builtin-schema", "vendor.github-workflows", *files]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ci_runs_the_readme_test_command_through_ci_run_on_every_pull_request():
    ci = load_workflow("ci.yml")
    assert "pull_request" in ci[True]  # PyYAML reads the key `on` as True
    steps = ci["jobs"]["test"]["steps"]
    assert [s.get("run") for s in steps][-1] == ".ci/run"
    assert "make test" in (ROOT / ".ci" / "run").read_text("utf-8")
    assert "make test" in (ROOT / "README.md").read_text("utf-8")


def test_pages_builds_main_for_the_pages_address_and_deploys_it():
    pages = load_workflow("pages.yml")
    assert pages[True]["push"]["branches"] == ["main"]
    build = pages["jobs"]["build"]["steps"]
    publish = next(s for s in build if "make publish" in s.get("run", ""))
    assert publish["env"]["SITE_URL"] == "${{ steps.pages.outputs.base_url }}/"
    uses = [s["uses"].split("@")[0] for s in build if "uses" in s]
    assert uses == ["actions/checkout", "actions/configure-pages", "actions/upload-pages-artifact"]
    assert pages["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert pages["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}


def test_every_action_is_pinned_to_a_release_version():
    for path in WORKFLOWS.glob("*.yml"):
        for ref in re.findall(r"uses:\s*(\S+)", path.read_text("utf-8")):
            assert re.fullmatch(r"actions/[\w-]+@v\d+\.\d+\.\d+", ref), (path.name, ref)

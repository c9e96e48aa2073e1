"""Publishing: SITE_URL and REPO_URL (the edit links) from the deployment
(build_scripts/hooks/site_url.py and repo_url.py, make publish),
the third-party notices made at vendor time (build_scripts/vendor/notices.py), the 404 page
and the CI workflows (.github/workflows/, checked against GitHub's workflow schema)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml
from helpers import MKDOCS, ROOT, SITE, TIERS, VENDOR, mkdocs_build, project_copy

from build_scripts.hooks import repo_url, site_url

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


# --------------------------------------------------------------------------- REPO_URL


def test_the_hook_sets_edit_links_only_from_a_set_repo_url():
    from mkdocs.exceptions import PluginError

    config = {"repo_url": None, "edit_uri": ""}
    repo_url.configure(config, environ={})
    assert config == {"repo_url": None, "edit_uri": ""}  # no repository, no edit link
    repo_url.configure(config, environ={"REPO_URL": "https://github.com/owner/repo.git"})
    assert config == {
        "repo_url": "https://github.com/owner/repo/",
        "repo_name": "owner/repo",
        "edit_uri": "edit/main/docs/",
    }
    repo_url.configure(config, environ={"REPO_URL": " https://github.com/o/r ", "REPO_BRANCH": "x"})
    assert config["edit_uri"] == "edit/x/docs/" and config["repo_url"] == "https://github.com/o/r/"
    for bad in ("github.com/owner/repo", "https://github.com/owner", "https://github.com/o/r?x"):
        with pytest.raises(PluginError, match="REPO_URL="):
            repo_url.configure({}, environ={"REPO_URL": bad})


def test_the_local_build_has_no_edit_link_and_no_repository_link():
    page = (SITE / "lessons" / "04-masking" / "index.html").read_text("utf-8")
    assert 'rel="edit"' not in page and "md-source" not in page


@pytest.mark.slow
def test_a_build_with_repo_url_links_every_page_to_its_source_and_asks_no_other_host(tmp_path):
    config = project_copy(tmp_path)
    env = {"REPO_URL": "https://github.com/owner/attn-book", "REPO_BRANCH": "main"}
    proc, output = mkdocs_build(tmp_path / "site", config, env=env)
    assert proc.returncode == 0, output
    edit = "https://github.com/owner/attn-book/edit/main/docs/"
    lesson = (tmp_path / "site" / "lessons" / "04-masking" / "index.html").read_text("utf-8")
    assert f'<a href="{edit}lessons/04-masking.md" title="Edit this page"' in lesson
    notebook = (tmp_path / "site" / "notebooks" / "04-masking" / "index.html").read_text("utf-8")
    assert f'href="{edit}notebooks/04-masking.py"' in notebook  # its source, not the cache
    # the header links the repository without Material's data-md-component="source", whose
    # script would ask api.github.com for the stars and forks
    assert 'class="md-source"' in lesson and 'data-md-component="source"' not in lesson
    assert "owner/attn-book" in lesson


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


def make_recipe(target: str) -> str:
    """The recipe lines of a Makefile target (no prerequisites, no expansion)."""
    text = (ROOT / "Makefile").read_text("utf-8")
    m = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert m, f"no make target {target}"
    return m.group(1)


def selected_tiers(target: str) -> set[str]:
    """The test tiers a make target's pytest runs (its -m expression; all without one)."""
    from _pytest.mark.expression import Expression

    recipe = make_recipe(target)
    if "-m pytest" not in recipe:
        return set()
    # the -m after pytest's own options (make variables such as $(PYTEST_WORKERS))
    m = re.search(r"-m pytest(?: \$\([A-Z_]+\))* -m (\"[^\"]+\"|\S+)", recipe)
    if not m:
        return set(TIERS)
    expr = Expression.compile(m.group(1).strip('"'))
    return {t for t in TIERS if expr.evaluate(lambda name, t=t: name in (t, "slow"))}


def test_ci_runs_the_readme_test_command_or_its_tiers_through_ci_run():
    run = (ROOT / ".ci" / "run").read_text("utf-8")
    assert 'targets=("${@:-test}")' in run and 'make "${targets[@]}"' in run  # alone: make test
    assert "make test" in (ROOT / "README.md").read_text("utf-8")
    assert selected_tiers("test") == set(TIERS)  # make test: pytest with no -m, every tier
    # each tier verb runs its own tiers only (so the check of the CI jobs below can fail)
    assert selected_tiers("test-python") == {"python"}
    assert selected_tiers("test-chromium") == {"build", "browser"}
    assert selected_tiers("test-engines") == {"engines"}
    ci = load_workflow("ci.yml")
    assert "pull_request" in ci[True]  # PyYAML reads the key `on` as True
    covered, jobs = set(), ci["jobs"]
    assert len(jobs) == 3
    for job in jobs.values():
        last = job["steps"][-1] if "upload" not in str(job["steps"][-1]) else job["steps"][-2]
        words = last["run"].split()
        assert words[0] == ".ci/run" and words[1:], last
        for target in words[1:]:
            covered |= selected_tiers(target)
    assert covered == set(TIERS), "the CI jobs between them must run every test tier"
    assert "lint" in str(jobs), "make lint runs in CI"


def test_ci_caches_downloads_by_their_lock_files_and_uploads_the_built_site():
    ci = load_workflow("ci.yml")
    for name, job in ci["jobs"].items():
        caches = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
        keys = " ".join(s["with"]["key"] for s in caches)
        assert "hashFiles('constraints.txt', 'pyproject.toml', 'package-lock.json')" in keys, name
        if name != "python":  # those two build the site: make vendor's downloads
            assert "vendor-lock.json" in keys, name
    upload = next(
        s for s in ci["jobs"]["chromium"]["steps"] if "upload-artifact" in s.get("uses", "")
    )
    assert upload["with"]["path"] == "site"
    assert "pull_request.number" in upload["with"]["name"]


def test_every_test_is_in_exactly_one_tier_by_its_folder():
    from helpers import tier_of

    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if "fixtures" in path.parts:
            continue
        assert tier_of(path) in TIERS, f"{path}: in no tier (tests/helpers.py FOLDER_TIERS)"
    assert tier_of(ROOT / "tests/browser/test_engines.py") == "engines"
    assert tier_of(ROOT / "tests/lessons/test_04_masking.py") == "python"


def test_pages_builds_main_for_the_pages_address_and_deploys_it():
    pages = load_workflow("pages.yml")
    assert pages[True]["push"]["branches"] == ["main"]
    build = pages["jobs"]["build"]["steps"]
    publish = next(s for s in build if "make publish" in s.get("run", ""))
    assert publish["env"]["SITE_URL"] == "${{ steps.pages.outputs.base_url }}/"
    assert publish["env"]["REPO_URL"] == "${{ github.server_url }}/${{ github.repository }}"
    uses = [s["uses"].split("@")[0] for s in build if "uses" in s]
    assert uses == ["actions/checkout", "actions/configure-pages", "actions/upload-pages-artifact"]
    assert pages["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert pages["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}


def test_every_action_is_pinned_to_a_release_version():
    for path in WORKFLOWS.glob("*.yml"):
        for ref in re.findall(r"uses:\s*(\S+)", path.read_text("utf-8")):
            assert re.fullmatch(r"actions/[\w-]+@v\d+\.\d+\.\d+", ref), (path.name, ref)

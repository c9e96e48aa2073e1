"""The home page's claims, checked against the built site: every planned lesson is listed
in order with the published ones linked (to pages that exist) and the others not; what a lab
downloads is stated as sent, matches what the browser receives, and is fetched once; the
labs' heads are said to be synthetic and the real maps' model is named."""

from __future__ import annotations

import json

import pytest
import yaml
from bs4 import BeautifulSoup
from helpers import ROOT, SITE

from build_scripts.gates.check_site import PAYLOAD_PREFIXES, PYTHON_TIMEOUT_MS

DOCS = ROOT / "docs"
LESSON = "lessons/03-attention-pattern/"
LAB = ".attn-lab"
# the file names the lessons are written under (issue 12), in order
FIRST_SIX = [
    "01-why-attention",
    "02-queries-and-keys",
    "03-attention-pattern",
    "04-masking",
    "05-values-and-the-update",
    "06-multi-head-attention",
]


def plan() -> list[dict]:
    return yaml.safe_load((DOCS / "data" / "lessons.yaml").read_text("utf-8"))["lessons"]


def home() -> BeautifulSoup:
    page = SITE / "index.html"
    assert page.is_file(), "run `make build` first (make test does)"
    return BeautifulSoup(page.read_text("utf-8"), "html.parser").find("article")


def home_text() -> str:
    return " ".join(home().get_text(" ").split())


def lesson_items():
    heading = home().find(id="lessons")
    return heading.find_next("ol").find_all("li", recursive=False)


def payload_sent_from_site() -> tuple[int, int]:
    """(sent, raw) bytes of the lab payload as the site serves it to a browser that accepts
    Brotli: .br where there is one; not the files the worker skips (the official copies of
    what was precompiled)."""
    from build_scripts.hooks.home import is_compressed_copy, not_fetched

    skip = not_fetched(SITE)  # the site's vendor/ is docs/vendor/, manifest included
    sent = raw = 0
    for prefix in PAYLOAD_PREFIXES:
        target = SITE / prefix
        files = [target] if target.is_file() else sorted(target.iterdir())
        for path in files:
            # a folder (vendor/labs/py3/, the notebooks' wheel) is not what the worker fetches
            if not path.is_file() or is_compressed_copy(path) or path.name in skip:
                continue
            br = path.with_name(path.name + ".br")
            raw += path.stat().st_size
            sent += br.stat().st_size if br.is_file() else path.stat().st_size
    return sent, raw


def test_the_plan_lists_every_lesson_file_in_number_order_with_the_fixed_names_first():
    names = [item["name"] for item in plan()]
    assert names[:6] == FIRST_SIX
    assert len(set(names)) == len(names)
    assert [n[:2] for n in names] == sorted(n[:2] for n in names)  # reading order
    # every lesson written so far is in the plan (make new-lesson adds its entry)
    missing = {p.stem for p in (DOCS / "lessons").glob("*.md")} - set(names)
    assert not missing, f"add {sorted(missing)} to docs/data/lessons.yaml"


def test_home_page_lists_every_planned_lesson_in_order():
    items = lesson_items()
    assert len(items) == len(plan())
    for li, item in zip(items, plan(), strict=True):
        text = " ".join(li.get_text(" ").split())
        learns = " ".join(item["learns"].split()).replace("`", "")
        assert learns in text, f"{item['name']}: {text!r}"


def test_published_lessons_are_links_that_resolve_and_planned_ones_are_not():
    published = 0
    for li, item in zip(lesson_items(), plan(), strict=True):
        links = li.find_all("a")
        if (DOCS / "lessons" / f"{item['name']}.md").is_file():
            published += 1
            assert len(links) == 1, item["name"]
            href = links[0]["href"]
            assert href == f"lessons/{item['name']}/"
            assert (SITE / href / "index.html").is_file()
            assert "coming" not in li.get_text()
        else:
            assert links == [], f"{item['name']} is not written yet but is a link"
            assert item["title"] in li.get_text() and "(coming)" in li.get_text()
    assert published >= 1


def test_home_page_states_what_a_lab_downloads_as_sent_and_unpacked():
    from build_scripts.hooks.home import lab_download

    sent, raw = payload_sent_from_site()
    stated = lab_download(DOCS)
    # the hook's own Brotli sizes agree with what compress.py wrote into the site
    assert stated.sent == pytest.approx(sent, rel=0.01)
    assert stated.raw == raw
    text = home_text()
    assert f"about {stated.sent / 1e6:.0f} MB as sent over the network" in text
    assert f"({stated.raw / 1e6:.0f} MB once unpacked)" in text
    assert 5e6 < stated.sent < stated.raw  # compressed, and a real payload
    # the labs as the worker fetches them: their archive, not the wheel beside it
    labs = [f for f in stated.files if f.startswith("vendor/labs/")]
    assert [f.rsplit(".", 2)[-2:] for f in labs] == [["tar", "gz"]], labs


def test_home_page_says_the_labs_heads_are_synthetic_and_names_the_real_model():
    text = home_text()
    assert "are synthetic" in text and "random numbers" in text
    models = json.loads((DOCS / "assets" / "attention" / "index.json").read_text("utf-8"))
    for model in models["models"]:
        assert model["id"].split("/")[-1] in text


def test_the_stated_download_is_what_the_browser_receives_once(browser, server):
    """Start a lab: the payload bytes received (as sent, Brotli) match the home page's figure
    within 3 %; reload and start again: the browser's cache answers (304s, no bodies)."""
    from build_scripts.hooks.home import lab_download

    stated = lab_download(DOCS).sent
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    finished = []
    context.on("requestfinished", lambda request: finished.append(request))
    page = context.new_page()
    try:

        def start_lab() -> int:
            finished.clear()
            page.goto(server.base + LESSON)
            page.locator(LAB).first.scroll_into_view_if_needed()
            page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
            page.wait_for_timeout(300)
            got = 0
            for request in finished:
                path = request.url.removeprefix(server.base).split("?")[0]
                if path.startswith(PAYLOAD_PREFIXES):
                    got += request.sizes()["responseBodySize"]
            return got

        first = start_lab()
        assert first == pytest.approx(stated, rel=0.03), f"received {first}, stated {stated}"
        again = start_lab()
        assert again < 0.01 * stated, f"a second visit downloaded {again} bytes again"
    finally:
        context.close()


def test_the_server_answers_a_cached_copy_with_304(server):
    """ "Fetched once": the project's server dates every file, gzip copies included, and
    answers a browser that has the file with 304 Not Modified (no body)."""
    from urllib.error import HTTPError
    from urllib.request import Request, urlopen

    url = server.base + "vendor/pyodide/pyodide.asm.wasm"
    with urlopen(Request(url, headers={"Accept-Encoding": "gzip"})) as first:
        assert first.headers["Content-Encoding"] == "gzip"
        modified = first.headers["Last-Modified"]
    assert modified
    headers = {"Accept-Encoding": "gzip", "If-Modified-Since": modified}
    with pytest.raises(HTTPError) as answer:
        urlopen(Request(url, headers=headers))
    assert answer.value.code == 304


def test_a_lesson_missing_from_the_plan_is_still_listed_by_its_number(tmp_path):
    from build_scripts.hooks import home

    (tmp_path / "data").mkdir()
    (tmp_path / "lessons").mkdir()
    (tmp_path / "data" / "lessons.yaml").write_text(
        "lessons:\n  - {name: 01-a, title: A, learns: One thing.}\n"
        "  - {name: 03-c, title: C, learns: Another.}\n",
        "utf-8",
    )
    (tmp_path / "lessons" / "01-a.md").write_text("---\ntitle: The A\n---\n# A\n", "utf-8")
    (tmp_path / "lessons" / "02-b.md").write_text(
        "---\ntitle: B\nsummary: What B says.\n---\n# B\n", "utf-8"
    )
    out = home.expand(f"Before\n\n{home.MARKER}\n\nAfter", tmp_path)
    assert out.split("\n")[3:6] == [
        "1. [The A](lessons/01-a.md): One thing.",
        "2. [B](lessons/02-b.md): What B says.",
        "3. C *(coming)*: Another.",
    ]
    assert home.COMING_NOTE in out  # a lesson is coming: the page says what the marks mean
    (tmp_path / "lessons" / "03-c.md").write_text("---\ntitle: C\n---\n# C\n", "utf-8")
    assert "coming" not in home.expand(home.MARKER, tmp_path)  # all written: nothing to say


def test_home_page_claims_only_the_arithmetic_matches_and_counts_the_models():
    """Issue 25: "what you see in a lab is what a real transformer computes" contradicted the
    next paragraph (the labs' heads are synthetic), and "every layer and head of that model"
    ignored that the explorer has two models."""
    text = home_text()
    assert "what you see in a lab is what a real transformer computes" not in text
    assert "the arithmetic in a lab is the arithmetic of a real transformer" in text
    models = json.loads((DOCS / "assets" / "attention" / "index.json").read_text("utf-8"))
    n = len(models["models"])
    assert n == 2
    assert f"every layer and head of each of these {n} models on real sentences" in text

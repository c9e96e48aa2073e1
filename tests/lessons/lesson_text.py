"""A page's text as the build renders it, for the claims tests of tests/lessons/."""

from __future__ import annotations

import re

import yaml
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts import hooks
from build_scripts.hooks import numbers as numbers_fence
from build_scripts.hooks import scanner


def read(src_uri: str) -> tuple[str, str, str]:
    """(source, rendered, text) of ``docs/<src_uri>``: the file, its Markdown as the build
    renders it (numbers filled, no fence rendered), and that with every run of whitespace
    one space (prose wraps lines anywhere)."""
    source = (ROOT / "docs" / src_uri).read_text(encoding="utf-8")
    rendered = hooks.render_page(meta.get_data(source)[0], src_uri, kinds=())
    return source, rendered, re.sub(r"\s+", " ", rendered)


def numbers(src_uri: str) -> dict:
    """The names the page's ```numbers fences define, run as the build runs them (every
    fence in page order, starting from np, math, attention_labs and docs): what the prose's
    ``{{ expr }}`` are filled from, for a claims test to check the prose's words against."""
    source = (ROOT / "docs" / src_uri).read_text(encoding="utf-8")
    markdown = meta.get_data(source)[0]
    page = scanner.Page(src_uri, scanner.front_matter_lines(markdown, source))
    namespace = numbers_fence.new_namespace(ROOT / "docs")
    for fence in scanner.scan(markdown):
        if fence.info == numbers_fence.NAME:
            numbers_fence.run(fence, page, namespace)
    return namespace


def claimer(text: str):
    """``claim(phrase)``: assert ``phrase`` (whitespace-normalised) is in ``text``."""

    def claim(phrase: str) -> None:
        phrase = re.sub(r"\s+", " ", phrase)
        assert phrase in text, f"the lesson no longer says: {phrase!r}"

    return claim


def fence_bodies(source: str, kind: str) -> list[str]:
    """The bodies of every ```<kind> fence of ``source``, in page order."""
    return [f.body for f in scanner.find_fences(source, (kind,))]


def lab_fences(source: str, lab: str) -> list[dict]:
    """The parameters of every ```lab fence of lab ``lab`` in ``source`` (without 'lab:')."""
    out = []
    for body in fence_bodies(source, "lab"):
        params = yaml.safe_load(body)
        if params.pop("lab") == lab:
            out.append(params)
    return out


def lab_params(source: str, lab: str) -> dict:
    """The parameters of the page's one ```lab fence of ``lab`` (what a reader first sees)."""
    (params,) = lab_fences(source, lab)
    return params

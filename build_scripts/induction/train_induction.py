"""Train a 2-layer attention-only decoder until an induction head forms, and write its story.

An induction head, at a token that occurred earlier, attends to the token that FOLLOWED the
earlier occurrence and copies it: "... A B ... A" -> predict "B". It needs two heads in two
layers: a previous-token head in layer 0 writes "my previous token was A" into each
position, and a head in layer 1 matches its query ("I am A") against those keys (Elhage et
al. 2021, "A Mathematical Framework for Transformer Circuits"; Olsson et al. 2022,
"In-context Learning and Induction Heads", Transformer Circuits Thread). They form
abruptly during training, and the loss on repeated text drops when they do.

The model here is that smallest case: token and learned position embeddings, two layers of
multi-head attention added to the residual stream (no MLP, no layer norm, no biases), and an
unembedding. It trains on sequences of uniformly random tokens in which one random segment
is repeated later: the only thing there is to learn is to copy the repeat.

Run: ``python -m build_scripts.induction.train_induction [--out DIR]``
(``make train-induction``). Deterministic: seeded, one thread, so the same machine writes
the same bytes; another machine may differ in the last float digits, not in the story
(which head, at which step).

Writes ``training.json`` (config, loss curve, every head's induction and previous-token
score per checkpoint, attention maps of one repeated sequence at selected checkpoints) and
``model.json`` (the final weights as float32, about 60 kB, for labs that run the model in
the browser), into labs_py/attention_labs/data/induction/ (shipped in the labs wheel).
Both are described in this file's `write_assets`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from attention_labs import real_maps

# In the labs package: the browser labs read them with the NumPy model
# (attention_labs.models.induction).
OUT = Path("labs_py/attention_labs/data/induction")
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# A head "is" an induction head when over half of its attention, averaged over the queries
# that have a target, lands on the one token after the earlier occurrence. An untrained head
# spreads its weight evenly: about 0.06 on the probe (1 target among ~18 keys on average).
INDUCTION_THRESHOLD = 0.5


@dataclass(frozen=True)
class Config:
    vocab_size: int = 26  # tokens shown as the letters A..Z
    seq_len: int = 32  # context length (positions 0..31)
    d_model: int = 32
    n_heads: int = 2  # per layer; d_head = d_model / n_heads = 16
    n_layers: int = 2
    min_repeat: int = 3  # length of the repeated segment, drawn in [min_repeat, max_repeat]
    max_repeat: int = 12
    batch_size: int = 32
    steps: int = 1200
    lr: float = 3e-3
    warmup: int = 50  # linear warm-up steps, then constant
    seed: int = 0
    eval_every: int = 25  # a checkpoint: loss and head scores
    eval_batch: int = 256
    map_steps: tuple = (0, 250, 350, 400, 450, 500, 700, 1200)  # checkpoints that keep maps
    probe_len: int = 12  # the shown sequence: probe_len random letters, then again

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads


# ----------------------------------------------------------------------------- the data


def repeated_batch(cfg: Config, gen, size: int):
    """``size`` sequences: a random prefix, then a random segment repeated to the end.

    Each sequence draws a segment length n in [min_repeat, max_repeat] and a prefix length
    in [0, n); the segment's uniformly random tokens then repeat until seq_len. Because n
    varies, "look n tokens back" is no rule: the model has to match content.

    Returns (tokens ``[size, seq_len]`` int64, predictable ``[size, seq_len - 1]`` bool:
    True where the next token is a copy, so knowable from the context).
    """
    import torch

    tokens = torch.randint(cfg.vocab_size, (size, cfg.seq_len), generator=gen)
    predictable = torch.zeros(size, cfg.seq_len - 1, dtype=torch.bool)
    lengths = torch.randint(cfg.min_repeat, cfg.max_repeat + 1, (size,), generator=gen)
    u = torch.rand(size, generator=gen)
    for i in range(size):
        n = int(lengths[i])
        start = int(u[i] * n)  # the prefix before the first segment
        for t in range(start + n, cfg.seq_len):
            tokens[i, t] = tokens[i, t - n]
        # the query at position t predicts token t + 1; from the first copy on it is known
        predictable[i, start + n - 1 :] = True
    return tokens, predictable


def probe_sequence(cfg: Config):
    """The sequence whose maps the assets show: ``probe_len`` distinct letters, twice."""
    rng = np.random.default_rng(cfg.seed + 1)
    first = rng.choice(cfg.vocab_size, size=cfg.probe_len, replace=False)
    return np.concatenate([first, first]).astype(np.int64)


# ----------------------------------------------------------------------------- the model


def build_model(cfg: Config):
    import torch
    from torch import nn

    class Attention(nn.Module):
        """Causal multi-head self-attention; returns (update, weights)."""

        def __init__(self):
            super().__init__()
            self.W_QKV = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
            self.W_O = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

        def forward(self, x):  # x: [batch, seq_len, d_model]
            b, n, _ = x.shape
            q, k, v = self.W_QKV(x).split(cfg.d_model, dim=-1)
            # [batch, n_heads, seq_len, d_head]
            q, k, v = (t.view(b, n, cfg.n_heads, cfg.d_head).transpose(1, 2) for t in (q, k, v))
            logits = q @ k.transpose(-1, -2) / math.sqrt(cfg.d_head)  # [b, h, query, key]
            mask = torch.ones(n, n, dtype=torch.bool).triu(1)
            weights = logits.masked_fill(mask, float("-inf")).softmax(dim=-1)
            out = (weights @ v).transpose(1, 2).reshape(b, n, cfg.d_model)
            return self.W_O(out), weights

    class AttentionOnly(nn.Module):
        def __init__(self):
            super().__init__()
            self.W_E = nn.Embedding(cfg.vocab_size, cfg.d_model)
            self.W_pos = nn.Embedding(cfg.seq_len, cfg.d_model)
            self.layers = nn.ModuleList(Attention() for _ in range(cfg.n_layers))
            self.W_U = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

        def forward(self, tokens):  # tokens: [batch, seq_len] -> logits, weights per layer
            n = tokens.shape[1]
            x = self.W_E(tokens) + self.W_pos(torch.arange(n))  # the residual stream
            patterns = []
            for layer in self.layers:
                update, weights = layer(x)
                x = x + update
                patterns.append(weights)
            return self.W_U(x), torch.stack(patterns, dim=1)  # [b, layer, head, q, k]

    model = AttentionOnly()
    for name, p in model.named_parameters():
        # embeddings start larger than the attention maps, so positions are told apart early
        nn.init.normal_(p, std=0.1 if name.startswith(("W_E", "W_pos")) else 0.02)
    return model


# ----------------------------------------------------------------------------- training


def evaluate(model, cfg: Config, batch, probe, device="cpu"):
    """Losses on a fixed batch, and every head's scores on the probe sequence."""
    import torch

    tokens, predictable = batch
    with torch.no_grad():
        logits, _ = model(tokens.to(device))
        losses = (
            torch.nn.functional.cross_entropy(
                logits[:, :-1].reshape(-1, cfg.vocab_size),
                tokens[:, 1:].reshape(-1).to(device),
                reduction="none",
            )
            .view(predictable.shape)
            .cpu()
        )
        _, weights = model(torch.from_numpy(probe)[None].to(device))
    w = weights[0].double().cpu().numpy()  # [layer, head, query, key]
    return {
        "loss": float(losses.mean()),
        "loss_repeated": float(losses[predictable].mean()),
        "loss_random": float(losses[~predictable].mean()),
        "induction": real_maps.induction_score(w, probe.tolist()),
        "previous_token": real_maps.previous_token_score(w),
        "weights": w,
    }


def train(cfg: Config, log=print, device="cpu"):
    """Train on ``device``; returns (model on the CPU, checkpoints list, wall seconds)."""
    import os

    import torch

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(1)  # same reductions in the same order: same bytes
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    torch.use_deterministic_algorithms(True)
    model = build_model(cfg).to(device)  # built on the CPU: same initial weights anywhere
    gen = torch.Generator().manual_seed(cfg.seed)
    eval_batch = repeated_batch(cfg, torch.Generator().manual_seed(cfg.seed + 2), cfg.eval_batch)
    probe = probe_sequence(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg.warmup))
    checkpoints = []
    t0 = time.perf_counter()
    for step in range(cfg.steps + 1):
        if step % cfg.eval_every == 0 or step in cfg.map_steps or step == cfg.steps:
            ev = evaluate(model, cfg, eval_batch, probe, device)
            ev["step"] = step
            checkpoints.append(ev)
            best = np.unravel_index(np.argmax(ev["induction"]), ev["induction"].shape)
            log(
                f"step {step:5d}  loss {ev['loss']:.3f} (repeated {ev['loss_repeated']:.3f})  "
                f"best induction L{best[0]}H{best[1]} {ev['induction'][best]:.2f}"
            )
        if step == cfg.steps:
            break
        tokens, _ = repeated_batch(cfg, gen, cfg.batch_size)  # drawn on the CPU
        tokens = tokens.to(device)
        logits, _ = model(tokens)
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, cfg.vocab_size), tokens[:, 1:].reshape(-1)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return model.cpu(), checkpoints, time.perf_counter() - t0


# ----------------------------------------------------------------------------- the assets


def story(checkpoints, threshold=INDUCTION_THRESHOLD):
    """What happened in training, in the terms a lesson uses.

    Returns {"previous_token_head": [layer, head] (layer 0's highest previous-token score at
    the end), "induction_heads": [[layer, head], ...] (heads scoring above ``threshold`` at
    the end), "formed_at_step" (first checkpoint where any head scores above it; None if
    none does), "final_best": that best score, "threshold"}.
    """
    final = checkpoints[-1]
    prev = np.asarray(final["previous_token"])
    ind = np.asarray(final["induction"])
    formed = next((c["step"] for c in checkpoints if np.max(c["induction"]) > threshold), None)
    return {
        "previous_token_head": [0, int(np.argmax(prev[0]))],
        "induction_heads": np.argwhere(ind > threshold).tolist(),
        "formed_at_step": formed,
        "final_best": round(float(ind.max()), 4),
        "threshold": threshold,
    }


def cpu_name() -> str:
    """The processor's model name as /proc/cpuinfo gives it (on cloud machines often only
    the family, "AMD EPYC": not enough to promise bytes, see ``machine``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """What decides the bytes of a CPU training run besides the inputs: the processor (name,
    family, model and stepping numbers, and a hash of its instruction-set flags, which decide
    which kernels oneDNN and the BLAS pick), the instruction set torch dispatches its own
    kernels to (``torch.backends.cpu.get_cpu_capability()``), the torch build and the thread
    count. Two machines with the same dict ran the same kernels on the same inputs (seen: two
    machines both named "AMD EPYC", different models, differed in 2 bytes of one map)."""
    import torch

    fields = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key in ("cpu family", "model", "stepping", "flags") and key not in fields:
                fields[key] = value.strip()
            if not line.strip() and fields:
                break  # the first processor's block is enough: they are all alike
    except OSError:
        pass
    flags = " ".join(sorted(fields.pop("flags", "").split()))
    return {
        "cpu": cpu_name(),
        "cpu_id": "/".join(fields.get(k, "?") for k in ("cpu family", "model", "stepping")),
        "cpu_flags_sha256": hashlib.sha256(flags.encode()).hexdigest()[:16],
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
        "threads": 1,
    }


def _r(x, digits=4):
    return np.round(np.asarray(x, dtype=np.float64), digits).tolist()


def write_assets(
    cfg: Config, model, checkpoints, out: Path, wall_s: float, device: str = "cpu"
) -> list[Path]:
    """Write training.json and model.json into ``out``; returns their paths.

    training.json: {schema_version, config, tokens (the letters), probe (token ids of the
    shown sequence), story, checkpoints: [{step, loss, loss_repeated, loss_random,
    induction [layer][head], previous_token [layer][head]}], maps: [{step, data
    [layer][head] uint8-base64 lower triangles (real_maps.quantise_rows, causal)}],
    provenance}. Scores are the share of attention on the expected key (real_maps).
    model.json: {config, weights: {name: {shape, data float32-le-base64}}, sha256}.
    """
    out.mkdir(parents=True, exist_ok=True)
    probe = probe_sequence(cfg)
    maps = [
        {
            "step": c["step"],
            "data": [
                [base64.b64encode(h.tobytes()).decode("ascii") for h in layer]
                for layer in real_maps.quantise_rows(c["weights"], causal=True)
            ],
        }
        for c in checkpoints
        if c["step"] in cfg.map_steps
    ]
    training = {
        "schema_version": 1,
        "config": {**asdict(cfg), "map_steps": list(cfg.map_steps), "d_head": cfg.d_head},
        "tokens": list(ALPHABET[: cfg.vocab_size]),
        "probe": probe.tolist(),
        "story": story(checkpoints),
        "checkpoints": [
            {
                "step": c["step"],
                "loss": round(c["loss"], 4),
                "loss_repeated": round(c["loss_repeated"], 4),
                "loss_random": round(c["loss_random"], 4),
                "induction": _r(c["induction"]),
                "previous_token": _r(c["previous_token"]),
            }
            for c in checkpoints
        ],
        "maps": maps,
        "provenance": {
            "script": "build_scripts/induction/train_induction.py",
            "python": platform.python_version(),
            "device": device,
            **machine(),
        },
    }
    state = {
        name: {
            "shape": list(t.shape),
            "data": real_maps.pack_vectors(t.detach().double().numpy().ravel()),
        }
        for name, t in model.state_dict().items()
    }
    blob = json.dumps(state, sort_keys=True).encode()
    weights = {
        "schema_version": 1,
        "config": training["config"],
        "weights": state,
        "sha256": hashlib.sha256(blob).hexdigest(),
    }
    paths = []
    for name, data in (("training.json", training), ("model.json", weights)):
        path = out / name
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
        paths.append(path)
    print(f"trained in {wall_s:.1f} s; wrote {', '.join(str(p) for p in paths)}")
    return paths


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the assets")
    parser.add_argument("--steps", type=int, default=Config.steps, help="training steps")
    parser.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="auto: CUDA when there is a GPU, else the CPU (the committed assets: cpu)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1; got {args.steps}")
    import torch

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA GPU is visible to PyTorch; use --device cpu")
    cfg = Config(steps=args.steps, map_steps=tuple(s for s in Config.map_steps if s <= args.steps))
    model, checkpoints, wall = train(
        cfg, log=(lambda *a: None) if args.quiet else print, device=device
    )
    write_assets(cfg, model, checkpoints, args.out, wall, device)
    s = story(checkpoints)
    print(
        f"previous-token head L{s['previous_token_head'][0]}H{s['previous_token_head'][1]}; "
        f"induction heads {s['induction_heads']} (above {s['threshold']} from step "
        f"{s['formed_at_step']}; best {s['final_best']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

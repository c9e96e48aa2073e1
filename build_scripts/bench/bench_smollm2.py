"""`make bench`, SmolLM2 part: SmolLM2-135M token by token (the explorer's "Your own sentence",
model SmolLM2) in Chromium, and the same NumPy code in CPython, in one run.

- weights on the wire: the bytes of docs/vendor/smollm2/ that Run downloads (the repacked
  GGUF blocks and the tokenizer; the server sends the weights as they are);
- first Run, cold: the click to the maps drawn on a fresh profile with a 20-token prompt
  (download, Python's start, loading and dequantising, the prefill, the asset, drawing); and
  again after a reload, the files then coming from the Cache API;
- load and dequantise: the worker's own clock on that first Run; CPython on the same file;
- prefill of 20 tokens, and decode tokens/s at 20, 100 and 500 tokens of context, by the
  same Python (`BENCH_CODE`) run in the page's worker and in CPython (one BLAS thread, as make
  bench sets): one token a step through all 30 layers and the tied head with the KV cache,
  no attention maps kept (as generating needs). The 100-token context is a real prefill; the
  500-token cache holds that text's keys and values five times over (a step's cost does
  not depend on what the keys are);
- worker memory: the size of Pyodide's WebAssembly memory after all of it (it never
  shrinks, so it is the peak of Python's heap), next to CPython's peak resident memory.

The page is served cross-origin isolated, so the browser's timers are not rounded to 0.1 ms.
A benchmark, not a test: it asserts nothing. Targets (issue 28): decode >= 8 tokens/s at 100
context, prefill of 20 tokens <= 1.5 s, Chromium <= 6x CPython, worker memory <= 1.5 GB.
Usage: python -m build_scripts.bench.bench_smollm2 [--runs 3] (repeats per measure)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench.contract import Row, med, run_alone  # noqa: E402
from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

SMOLLM2 = ROOT / "site" / "vendor" / "smollm2"
CONTEXTS = (20, 100, 500)
PROMPT = "The cat sat on the mat and then it ran to the park to see one more big dog"  # 19 tokens

FIRST_RUN_JS = """async (text) => {
  const p = document.querySelector('.attn-map').attnMap.ownPanel;
  p.setMode('decoder');
  p.text.value = text;
  const t0 = performance.now();
  await p.step('run', {});
  if (!p.decoderResult) throw new Error(p.errorText.textContent);
  return {...p.lastRun, wall_ms: performance.now() - t0,
          seq_len: p.decoderResult.result.asset.seq_len};
}"""
CELL_JS = """async (code) => {
  const { runtime } = await import(new URL('../javascripts/runtime/lab-runtime.js', location.href));
  const streamed = [];
  const r = await runtime.runCell('explorer', code, 'bench', {
    onOutput: (items) => streamed.push(...items),
  });
  if (r.error) throw new Error(JSON.stringify(r.error));
  return [...streamed, ...r.outputs].filter((o) => o.type === 'stream').map((o) => o.text).join('');
}"""
# The measurement itself, the same text in the worker and in CPython: prints one JSON line.
BENCH_CODE = """
import json, sys, time
import numpy as np
from attention_labs.models import own_decoder, smollm2

def _bench(repeats, prompt, contexts):
    if own_decoder._MODEL:  # the worker: the weights the panel loaded
        tokenizer, weights = next(iter(own_decoder._MODEL.values()))[:2]
    else:
        tokenizer, weights = own_decoder.load_model()
    ms = lambda t0: (time.perf_counter() - t0) * 1000
    ids = [0] + tokenizer.encode(prompt).ids
    out = {"prompt_tokens": len(ids), "prefill_ms": [], "decode_ms": {}}
    for _ in range(repeats):
        t0 = time.perf_counter()
        smollm2.forward(ids, weights, smollm2.KVCache(), logits="last")
        out["prefill_ms"].append(ms(t0))
    long_ids = (ids * 5)[:100]
    for n in contexts:
        cache = smollm2.KVCache(capacity=n + repeats + 1)
        if n <= 100:
            smollm2.forward(long_ids[:n], weights, cache, logits="last", attention=False)
        else:  # a 100-token text's keys and values, repeated: the same cost per step
            base = smollm2.KVCache(capacity=100)
            smollm2.forward(long_ids, weights, base, logits="last", attention=False)
            for layer in range(cache.n_layers):
                cache.append(layer, np.tile(base.keys(layer), (1, n // 100, 1)),
                             np.tile(base.values(layer), (1, n // 100, 1)))
            cache.advance(n)
        steps = []
        for i in range(repeats):
            t0 = time.perf_counter()
            smollm2.forward([long_ids[i]], weights, cache, logits="last", attention=False)
            steps.append(ms(t0))
        out["decode_ms"][str(n)] = steps
    try:
        import pyodide_js  # the worker: WebAssembly memory (never shrinks: the peak)
        out["memory_bytes"] = int(pyodide_js._module.HEAPU8.length)
    except ImportError:
        import resource
        out["memory_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out
"""


def worker_code(repeats: int, contexts=CONTEXTS) -> str:
    call = f"_bench({repeats}, {PROMPT!r}, {tuple(contexts)!r})"
    return f"{BENCH_CODE}\nprint(json.dumps({call}))\n"


def browser_times(pw, base: str, repeats: int) -> dict:
    browser = launch(pw)
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        page.goto(base + "explorer/")
        page.wait_for_selector(".attn-own", timeout=60_000)
        first = page.evaluate(FIRST_RUN_JS, PROMPT)
        measured = json.loads(page.evaluate(CELL_JS, worker_code(repeats)).strip())
        page.reload()
        page.wait_for_selector(".attn-own", timeout=60_000)
        cached = page.evaluate(FIRST_RUN_JS, PROMPT)
        return {"first": first, "cached": cached, **measured}
    finally:
        browser.close()


def cpython_times(repeats: int) -> dict:
    from attention_labs.models import smollm2

    data = (SMOLLM2 / "smollm2-135m.q4_1.safetensors").read_bytes()
    loads = []
    for _ in range(2):
        t0 = time.perf_counter()
        smollm2.load_weights(data)
        loads.append((time.perf_counter() - t0) * 1000)
    del data
    namespace: dict = {}
    exec(BENCH_CODE, namespace)  # the worker's code, here
    out = namespace["_bench"](repeats, PROMPT, CONTEXTS)
    out["load_ms"] = loads
    return out


def measure(repeats: int = 3) -> dict:
    """``repeats`` runs per measure; returns {"wire_bytes", "browser", "cpython"} (ms)."""
    from playwright.sync_api import sync_playwright

    manifest = json.loads((SMOLLM2 / "smollm2.json").read_text("utf-8"))
    wire = sum(f["bytes"] for n, f in manifest["files"].items() if n != "LICENSE")
    server = make_server(ROOT / "site", 0, isolate=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as pw:
            browser = browser_times(pw, base, repeats)
    finally:
        server.shutdown()
    os.environ.setdefault("ATTENTION_LABS_SMOLLM2", str(SMOLLM2))
    cpython = cpython_times(repeats)
    median = statistics.median
    b, c = browser, cpython
    print(f"weights on the wire: {wire / 1e6:.1f} MB")
    first, cached = b["first"]["wall_ms"] / 1000, b["cached"]["wall_ms"] / 1000
    print(f"first Run cold {first:.1f} s, cached {cached:.1f} s")
    print(f"load: browser {b['first']['load_ms']:.0f} ms, CPython {median(c['load_ms']):.0f} ms")
    pb, pc = median(b["prefill_ms"]), median(c["prefill_ms"])
    print(f"prefill {b['prompt_tokens']}: browser {pb:.0f} ms, CPython {pc:.0f} ms")
    for n in CONTEXTS:
        bm, cm = median(b["decode_ms"][str(n)]), median(c["decode_ms"][str(n)])
        rate_b, rate_c = 1000 / bm, 1000 / cm
        print(f"decode at {n}: browser {rate_b:.1f}/s, CPython {rate_c:.1f}/s ({bm / cm:.1f}x)")
    print(
        f"memory: worker {b['memory_bytes'] / 1e9:.2f} GB, CPython {c['memory_bytes'] / 1e9:.2f} GB"
    )
    return {"wire_bytes": wire, "browser": browser, "cpython": cpython}


def rows(args) -> list[Row]:
    """SmolLM2 token by token: Chromium and CPython, ``args.runs`` repeats each (at least 3)."""
    out = measure(max(3, args.runs))
    b, c = out["browser"], out["cpython"]
    name = "SmolLM2-135M (token by token)"
    median = statistics.median
    found = [
        Row(name, "weights on the wire", f"{out['wire_bytes'] / 1e6:.1f} MB",
            "the GGUF's Q4_1/Q8_0 blocks repacked + tokenizer.json; downloaded on the first "
            "Run, then from the Cache API"),
        Row(name, "first Run, cold (download, Python, load, prefill, maps)",
            f"{b['first']['wall_ms'] / 1000:.1f} s",
            f"local server, {b['first']['seq_len']} tokens; after a reload, files from the "
            f"Cache API: {b['cached']['wall_ms'] / 1000:.1f} s"),
        Row(name, "load and dequantise (Chromium worker)", f"{b['first']['load_ms']:.0f} ms",
            f"134.5 M weights to float32; CPython {med(c['load_ms'], digits=0)}"),
        Row(name, f"prefill, {b['prompt_tokens']} tokens (Chromium)",
            med(b["prefill_ms"], digits=0),
            f"CPython {med(c['prefill_ms'], digits=0)} (one BLAS thread); ratio "
            f"{median(b['prefill_ms']) / median(c['prefill_ms']):.1f}x; target <= 1.5 s"),
    ]  # fmt: skip
    for n in CONTEXTS:
        bm, cm = b["decode_ms"][str(n)], c["decode_ms"][str(n)]
        found.append(
            Row(name, f"decode at {n} tokens of context (Chromium)",
                f"{1000 / median(bm):.1f} tokens/s ({med(bm, digits=0)} a token)",
                f"CPython {1000 / median(cm):.1f} tokens/s; ratio {median(bm) / median(cm):.1f}x"
                + ("; target >= 8 tokens/s, <= 6x" if n == 100 else ""))
        )  # fmt: skip
    found.append(
        Row(name, "worker memory (WebAssembly heap, peak)", f"{b['memory_bytes'] / 1e9:.2f} GB",
            f"CPython peak resident {c['memory_bytes'] / 1e9:.2f} GB; target <= 1.5 GB")
    )  # fmt: skip
    return found


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())

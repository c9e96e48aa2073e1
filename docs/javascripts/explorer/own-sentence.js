// The explorer's "Your own sentence": the reader's text through the real all-MiniLM-L6-v2,
// computed in the Python worker (labs_py/attention_labs/labs/own_sentence.py, NumPy), and
// drawn by the same views as the precomputed maps (map.showOwn).
//
// Nothing downloads until Run. Then the int8 weights and the vocabulary (sizes from the
// build, build_scripts/minilm/quantise.py) come once, with progress, checked against their
// sha256, and go into the Cache API, so the next visit reads them from the disk. The worker
// reads them from blob: URLs, so the bytes never travel through JSON. The text stays here.
import { runtime } from "../runtime/lab-runtime.js";
import { SITE_ROOT } from "../runtime/site.js";
import { el } from "../ui/dom.js";
import { button } from "./parts.js";

const CACHE = "attention-minilm";
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
let files = null; // Promise of {weights, vocab} blob URLs: once per page load

async function sha256Hex(blob) {
  if (!self.crypto?.subtle) return null; // not a secure context: the check is skipped
  const digest = await crypto.subtle.digest("SHA-256", await blob.arrayBuffer());
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function openCache() {
  try {
    return "caches" in self ? await caches.open(CACHE) : null;
  } catch {
    return null; // private windows may refuse storage: download every visit instead
  }
}

/** One file ({url, bytes, sha256}) as a Blob: from the cache, or downloaded with progress. */
async function fetchFile(file, onBytes) {
  const url = new URL(file.url, SITE_ROOT).href;
  const key = `${url}?sha256=${file.sha256}`;
  const cache = await openCache();
  const hit = cache && (await cache.match(key));
  if (hit) {
    onBytes(file.bytes, true);
    return hit.blob();
  }
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new Error(`could not download ${url} (${err.message})`);
  }
  if (!response.ok) throw new Error(`could not download ${url} (HTTP ${response.status})`);
  const chunks = [];
  let loaded = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    onBytes(loaded, false);
  }
  const blob = new Blob(chunks);
  const sha = await sha256Hex(blob);
  if (sha && sha !== file.sha256)
    throw new Error(
      `${url} is damaged (sha256 ${sha.slice(0, 12)}…, expected ${file.sha256.slice(0, 12)}…)`,
    );
  if (cache) {
    // Older versions of the same file go; a full disk only costs the next visit a download.
    for (const old of await cache.keys())
      if (old.url.startsWith(`${url}?`) && old.url !== key) await cache.delete(old);
    await cache.put(key, new Response(blob)).catch(() => {});
  }
  return blob;
}

/** The model's files as blob: URLs, downloaded (or read from the cache) once per page load. */
function modelFiles(own, onProgress) {
  if (!files) {
    const total = own.weights.bytes + own.vocab.bytes;
    const got = { weights: 0, vocab: 0 };
    const report = (name) => (n, cached) => {
      got[name] = n;
      onProgress(got.weights + got.vocab, total, cached);
    };
    files = Promise.all([
      fetchFile(own.weights, report("weights")),
      fetchFile(own.vocab, report("vocab")),
    ]).then(([w, v]) => ({ weights: URL.createObjectURL(w), vocab: URL.createObjectURL(v) }));
    files.catch(() => {
      files = null; // Retry downloads again
    });
  }
  return files;
}

export class OwnSentencePanel {
  /**
   * @param {object} map the AttentionMap (showOwn draws the result)
   * @param {{lab, runtime, model_id, weights, vocab, licence, max_tokens}} own the build's
   *   config (build_scripts/hooks/attention_map.py)
   */
  constructor(map, own) {
    this.map = map;
    this.own = own;
    this.runs = 0;
    const id = `${map.id}-own`;
    this.root = el("section", "attn-own");
    this.root.setAttribute("aria-labelledby", `${id}-title`);
    const title = el("p", "attn-own__title", "Your own sentence");
    title.id = `${id}-title`;
    const size = mb(own.weights.bytes + own.vocab.bytes);
    const about = el(
      "p",
      "attn-own__about",
      `Type any text and press Run: the real ${own.model_id.split("/").pop()} computes its attention here, in your browser, with the NumPy code of attention_labs/models/ (the tokenizer and a forward pass you can read). Run downloads the model once: ${size} (int8 weights and the 30,522-token vocabulary), then keeps it in your browser's cache for the next visit. Your text is not sent anywhere. Weights: sentence-transformers, `,
    );
    const licence = el("a", null, `${own.licence.name} licence`);
    licence.href = new URL(own.licence.url, SITE_ROOT).href;
    about.append(licence, ".");
    const label = el("label", null, "Your sentence");
    label.htmlFor = `${id}-text`;
    this.text = el("textarea", "attn-own__text");
    this.text.id = `${id}-text`;
    this.text.rows = 2;
    this.text.maxLength = 2000;
    this.text.value = "The trophy did not fit into the brown suitcase because it was too big.";
    this.runButton = button("Run", "attn-own__run");
    this.runButton.addEventListener("click", () => this.run());
    this.text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) this.run();
    });
    this.statusBox = el("div", "attn-own__status");
    this.bar = el("progress", "attn-lab__progress");
    this.bar.setAttribute("aria-label", "Loading the model");
    this.bar.hidden = true;
    this.status = el("span", null, `Nothing downloaded yet; Run fetches ${size} once.`);
    this.status.setAttribute("role", "status");
    this.statusBox.append(this.bar, this.status);
    this.error = el("div", "attn-own__error");
    this.error.setAttribute("role", "alert");
    this.errorText = el("p");
    this.retry = button("Retry", "attn-own__retry");
    this.retry.addEventListener("click", () => this.run());
    this.error.append(this.errorText, this.retry);
    this.error.hidden = true;
    this.pieces = el("p", "attn-own__pieces");
    this.pieces.hidden = true;
    this.root.append(title, about, label, this.text, this.runButton, this.statusBox, this.error);
    this.root.append(this.pieces);
    this.root.dataset.state = "idle";
  }

  _status(text, value = null, max = null) {
    this.status.textContent = text;
    this.bar.hidden = value === null;
    if (value !== null) {
      if (max) {
        this.bar.max = max;
        this.bar.value = value;
      } else this.bar.removeAttribute("value"); // indeterminate
    }
  }

  _fail(message, retry) {
    this.root.dataset.state = "error";
    this.error.hidden = false;
    this.errorText.textContent = message;
    this.retry.hidden = !retry;
    this._status("");
  }

  async run() {
    if (this.busy) return;
    const text = this.text.value;
    this.error.hidden = true;
    if (!text.trim()) {
      this._fail("Type a sentence first: the box is empty.", false);
      this.text.focus();
      return;
    }
    this.busy = true;
    this.runButton.disabled = true;
    this.root.dataset.state = "loading";
    const t0 = performance.now();
    try {
      const urls = await modelFiles(this.own, (n, total, cached) =>
        this._status(
          cached
            ? "Reading the model from your browser's cache…"
            : `Downloading the model: ${mb(n)} of ${mb(total)}`,
          n,
          total,
        ),
      ).catch((err) => {
        throw Object.assign(err, { retry: true });
      });
      runtime.configure(this.own.runtime);
      const onRuntime = () => {
        if (runtime.state === "loading") this._status(`${runtime.progress.message}…`, 0);
      };
      runtime.addEventListener("change", onRuntime);
      if (runtime.state !== "ready") this._status("Starting Python…", 0);
      else this._status("Running the model…", 0);
      let answer;
      try {
        answer = await runtime.run(this.own.lab, {
          text,
          weights_url: urls.weights,
          vocab_url: urls.vocab,
          weights_sha256: this.own.weights.sha256,
        });
      } finally {
        runtime.removeEventListener("change", onRuntime);
      }
      if (!answer.ok) {
        this._fail(answer.error, false);
        return;
      }
      const { asset, pieces, run } = answer.result;
      this.runs++;
      this.lastRun = { ...run, total_ms: performance.now() - t0 };
      this.pieces.hidden = false;
      this.pieces.textContent = `Word pieces (${asset.seq_len} tokens): ${pieces.join(" · ")}`;
      const load = run.load_ms ? `, weights loaded in ${(run.load_ms / 1000).toFixed(1)} s` : "";
      this._status(
        `Computed in your browser in ${Math.round(run.forward_ms)} ms${load}. The maps below are your sentence's.`,
      );
      this.root.dataset.state = "ready";
      this.map.showOwn(asset);
    } catch (err) {
      this._fail(
        `${err.message}. ${err.retry ? "The rest of the page still works; press Retry to try the download again." : "Press Retry."}`,
        true,
      );
    } finally {
      this.busy = false;
      this.runButton.disabled = false;
    }
  }
}

// The explorer's "Your own sentence": the reader's text through the real all-MiniLM-L6-v2,
// computed in the Python worker by a map source (labs_py/attention_labs/models/own_sentence.py,
// NumPy; runtime.runSource), and drawn by the same views as the precomputed maps
// (map.showOwn). A second source, lesson 12's induction-head model, runs on the reader's
// letters (models/own_letters.py); its weights come with the labs package, so it downloads
// nothing more. A third, SmolLM2-135M-Instruct, reads the reader's prompt and then adds tokens
// one at a time (models/own_decoder.py; its controls are own-decoder.js).
//
// Nothing downloads until Run. Then the model's files (sizes from the build,
// build_scripts/minilm/quantise.py and build_scripts/smollm2/pack.py) come once, with progress, checked against their
// sha256, and go into the Cache API, so the next visit reads them from the disk. The worker
// reads them from blob: URLs, so the bytes never travel through JSON. The text stays here.
import { runtime } from "../runtime/lab-runtime.js";
import { SITE_ROOT } from "../runtime/site.js";
import { el, nextTask } from "../ui/dom.js";
import { DecoderView } from "./own-decoder.js";
import { button, select, statusLine } from "./parts.js";

const CACHE = "attention-minilm";
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
const loads = {}; // model -> Promise of {name: blob URL}: once per page load

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

/**
 * A model's files ({name: {url, bytes, sha256}}) as blob: URLs ({name: url}), downloaded
 * (or read from the cache) once per page load; `onProgress(bytes, total, cached)`.
 */
function modelFiles(model, files, onProgress) {
  if (!loads[model]) {
    const names = Object.keys(files);
    const total = names.reduce((sum, n) => sum + files[n].bytes, 0);
    const got = Object.fromEntries(names.map((n) => [n, 0]));
    const report = (name) => (n, cached) => {
      got[name] = n;
      onProgress(
        Object.values(got).reduce((a, b) => a + b, 0),
        total,
        cached,
      );
    };
    loads[model] = Promise.all(names.map((n) => fetchFile(files[n], report(n)))).then((blobs) =>
      Object.fromEntries(names.map((n, i) => [n, URL.createObjectURL(blobs[i])])),
    );
    loads[model].catch(() => {
      delete loads[model]; // Retry downloads again
    });
  }
  return loads[model];
}

const count = (n) => n.toLocaleString("en");

// What the panel says for each model it can run (the reader picks one).
function modes(own) {
  const name = own.model_id.split("/").pop();
  const size = mb(own.weights.bytes + own.vocab.bytes);
  const out = {
    sentence: {
      option: `${name}: your sentence`,
      label: "Your sentence",
      value: "The trophy did not fit into the brown suitcase because it was too big.",
      maxLength: 2000,
      about: `Type any text and press Run: the real ${name} computes its attention here, in your browser, with the NumPy code of attention_labs/models/ (the tokenizer and a forward pass you can read). Run downloads the model once: ${size} (int8 weights and the 30,522-token vocabulary), then keeps it in your browser's cache for the next visit. Your text is not sent anywhere. Weights: sentence-transformers, `,
      hint: `At most ${own.max_tokens} tokens (word pieces); Ctrl+Enter runs it too.`,
      idle: `Nothing downloaded yet; Run fetches ${size} once.`,
      empty: "Type a sentence first: the box is empty.",
    },
  };
  const l = own.letters;
  if (l)
    out.letters = {
      option: "induction-head model (lesson 12): your letters",
      label: "Your letters",
      value: l.default,
      maxLength: 200,
      about:
        "Type letters and press Run: the 2-layer, attention-only model trained for lesson 12 to continue repeated sequences computes its attention here, with the NumPy code of attention_labs/models/induction.py. Its weights came with Python's labs package: nothing more downloads, and nothing is sent anywhere. ",
      hint: `${l.min_letters} to ${l.max_letters} letters A to Z, one token each (spaces are ignored). Repeat a stretch, as in ${l.default}, and the induction head fires: under All heads, pick the statistic “Induction score”.`,
      idle: "Nothing to download: press Run.",
      empty: `Type some letters first: the box is empty (${l.min_letters} to ${l.max_letters} letters A to Z).`,
    };
  const d = own.decoder;
  if (d) {
    const size = mb(d.weights.bytes + d.tokenizer.bytes);
    const dname = d.model_id.split("/").pop();
    out.decoder = {
      option: `${dname}: your prompt, token by token`,
      label: "Your prompt",
      value: d.default,
      maxLength: 2000,
      about: `Type a prompt and press Run: the real ${dname}, a decoder of ${d.n_layers} layers whose ${d.n_heads} query heads share ${d.n_kv_heads} key/value heads, computes its attention here, in your browser, with the NumPy code of attention_labs/models/smollm2.py, and predicts the next token; then add tokens one at a time. Run downloads the model once: ${size} (its 4-bit weights exactly as the GGUF file stores them, and its tokenizer), then keeps it in your browser's cache for the next visit; as numbers it takes about 0.8 GB of memory. Your text is not sent anywhere. Weights: Hugging Face, `,
      hint: `At most ${d.max_prompt_tokens} tokens with the <|endoftext|> put in front, ${d.max_tokens} with the ones added; Ctrl+Enter runs it too.`,
      idle: `Nothing downloaded yet; Run fetches ${size} once.`,
      empty: "Type a prompt first: the box is empty.",
    };
  }
  return out;
}

export class OwnSentencePanel {
  /**
   * @param {object} map the AttentionMap (showOwn draws the result)
   * @param {{source, runtime, model_id, weights, vocab, licence, max_tokens, letters?}} own
   *   the build's config (build_scripts/hooks/attention_map.py); letters: {source, default,
   *   min_letters, max_letters} of the induction-head model
   */
  constructor(map, own) {
    this.map = map;
    this.own = own;
    this.runs = 0;
    this.modes = modes(own);
    this.mode = "sentence";
    this.values = Object.fromEntries(Object.entries(this.modes).map(([k, m]) => [k, m.value]));
    const id = `${map.id}-own`;
    this.root = el("section", "attn-own");
    this.root.setAttribute("aria-labelledby", `${id}-title`);
    const title = el("p", "attn-own__title", "Your own sentence");
    title.id = `${id}-title`;
    this.root.append(title);
    if (this.modes.letters || this.modes.decoder) {
      this.modelSel = select(
        "Model",
        `${id}-pick`,
        Object.entries(this.modes).map(([k, m]) => [k, m.option]),
      );
      this.modelSel.wrap.classList.add("attn-own__model");
      this.modelSel.select.addEventListener("change", () =>
        this.setMode(this.modelSel.select.value),
      );
      this.root.append(this.modelSel.wrap);
    }
    this.about = el("p", "attn-own__about");
    this.label = el("label");
    this.label.htmlFor = `${id}-text`;
    this.text = el("textarea", "attn-own__text");
    this.text.id = `${id}-text`;
    this.text.rows = 2;
    this.text.spellcheck = false;
    this.hint = el("p", "attn-own__hint");
    this.hint.id = `${id}-hint`;
    this.text.setAttribute("aria-describedby", this.hint.id);
    this.runButton = button("Run", "attn-own__run");
    this.runButton.addEventListener("click", () => this.run());
    // No maxlength: it would cut a pasted text without a word. Over the limit, the hint
    // says so as the reader types, and Run refuses with the text's real length.
    this.text.addEventListener("input", () => this._length());
    this.text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) this.run();
    });
    this.statusLine = statusLine("attn-own__status", "Loading the model");
    this.status = this.statusLine.text;
    this.error = el("div", "attn-own__error");
    this.error.setAttribute("role", "alert");
    this.errorText = el("p");
    this.retry = button("Retry", "attn-own__retry");
    this.retry.addEventListener("click", () => (this.retryAction ?? (() => this.run()))());
    this.error.append(this.errorText, this.retry);
    this.error.hidden = true;
    this.pieces = el("p", "attn-own__pieces");
    this.pieces.hidden = true;
    this.root.append(this.about, this.label, this.text, this.hint, this.runButton);
    this.root.append(this.statusLine.root, this.error, this.pieces);
    if (own.decoder) {
      this.decoder = new DecoderView(id, own.decoder, {
        step: (action, extra) => this.step(action, extra),
        repeat: (text) => {
          this.text.value = text;
          this._length();
          this.run();
        },
      });
      this.root.append(this.decoder.root);
      this.decoderResult = null; // the last answer: the ids the next step continues
    }
    this.root.dataset.state = "idle";
    this._show();
  }

  /** Switch to model `mode` ("sentence" or "letters"): its text, words and limits. */
  setMode(mode) {
    if (!(mode in this.modes) || mode === this.mode) return;
    this.values[this.mode] = this.text.value;
    this.mode = mode;
    if (this.modelSel) this.modelSel.select.value = mode;
    this.error.hidden = true;
    this._show();
  }

  _show() {
    const m = this.modes[this.mode];
    this.root.dataset.mode = this.mode;
    this.label.textContent = m.label;
    this.text.setAttribute("autocapitalize", this.mode === "letters" ? "characters" : "sentences");
    this.text.value = this.values[this.mode];
    this._length();
    this.about.textContent = m.about;
    const lic = { sentence: this.own.licence, decoder: this.own.decoder?.licence }[this.mode];
    if (lic) {
      const licence = el("a", null, `${lic.name} licence`);
      licence.href = new URL(lic.url, SITE_ROOT).href;
      this.about.append(licence, ".");
    }
    if (this.decoder) this.decoder.root.hidden = this.mode !== "decoder" || !this.decoderResult;
    if (!this.busy) this._status(this.runs ? "" : m.idle);
  }

  /** How much longer than its limit the box's text is, in characters (0 when it fits). */
  _over() {
    return Math.max(0, this.text.value.length - this.modes[this.mode].maxLength);
  }

  /** The hint, with the text's length when it is over the limit. */
  _length() {
    const m = this.modes[this.mode];
    const over = this._over() > 0;
    this.text.setAttribute("aria-invalid", String(over));
    this.hint.textContent = over
      ? `${m.hint} Your text is ${count(this.text.value.length)} characters: at most ${count(m.maxLength)} are read, so shorten it before Run.`
      : m.hint;
  }

  _status(text, value = null, max = null) {
    this.statusLine.show(text, value, max);
  }

  _fail(message, retry) {
    this.root.dataset.state = "error";
    this.error.hidden = false;
    this.errorText.textContent = message;
    this.retry.hidden = !retry;
    this._status("");
  }

  /** The model's files as blob: URLs, with the download's progress in the status line. */
  _files(mode) {
    const files =
      mode === "decoder"
        ? { weights: this.own.decoder.weights, tokenizer: this.own.decoder.tokenizer }
        : { weights: this.own.weights, vocab: this.own.vocab };
    return modelFiles(mode, files, (n, total, cached) =>
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
  }

  /** Run map source `source` in the Python worker, with Python's start-up in the status line. */
  async _python(source, params) {
    runtime.configure(this.own.runtime);
    const onRuntime = () => {
      if (runtime.state === "loading") this._status(`${runtime.progress.message}…`, 0);
    };
    runtime.addEventListener("change", onRuntime);
    this._status(runtime.state !== "ready" ? "Starting Python…" : "Running the model…", 0);
    try {
      return await runtime.runSource(source, params);
    } finally {
      runtime.removeEventListener("change", onRuntime);
    }
  }

  async run() {
    if (this.busy) return;
    const mode = this.mode;
    const text = this.text.value;
    this.error.hidden = true;
    if (!text.trim()) {
      this._fail(this.modes[mode].empty, false);
      this.text.focus();
      return;
    }
    if (this._over()) {
      const max = this.modes[mode].maxLength;
      this._fail(
        `Your text is ${count(text.length)} characters, more than the ${count(max)} this box reads: shorten it and press Run.`,
        false,
      );
      this.text.focus();
      return;
    }
    if (mode === "decoder") return this.step("run", {});
    this.retryAction = null;
    this.busy = true;
    this.runButton.disabled = true;
    if (this.modelSel) this.modelSel.select.disabled = true;
    this.root.dataset.state = "loading";
    const t0 = performance.now();
    try {
      let answer;
      if (mode === "letters") answer = await this._python(this.own.letters.source, { text });
      else {
        const urls = await this._files(mode);
        answer = await this._python(this.own.source, {
          text,
          weights_url: urls.weights,
          vocab_url: urls.vocab,
          weights_sha256: this.own.weights.sha256,
        });
      }
      const t1 = performance.now();
      if (!answer.ok) {
        this._fail(answer.error, false);
        return;
      }
      // The answer (a few MB of JSON at 128 tokens) was parsed in this task; the maps draw
      // in the next one (issue 24: no task over 100 ms).
      await nextTask();
      const { asset, run } = answer.result;
      const pieces = answer.result.pieces || asset.tokens.text;
      this.runs++;
      this.pieces.hidden = false;
      this.pieces.textContent =
        mode === "letters"
          ? `Tokens (${asset.seq_len}, one per letter): ${pieces.join(" · ")}`
          : `Word pieces (${asset.seq_len} tokens): ${pieces.join(" · ")}`;
      const load = run.load_ms ? `, weights loaded in ${(run.load_ms / 1000).toFixed(1)} s` : "";
      this._status(
        `Computed in your browser in ${Math.round(run.forward_ms)} ms${load}. The maps below are your ${mode === "letters" ? "letters'" : "sentence's"}.`,
      );
      this.root.dataset.state = "ready";
      this.map.showOwn(asset);
      const t2 = performance.now();
      this.lastRun = { ...run, mode, python_ms: t1 - t0, draw_ms: t2 - t1, total_ms: t2 - t0 };
    } catch (err) {
      this._fail(
        `${err.message}. ${err.retry ? "The rest of the page still works; press Retry to try the download again." : "Press Retry."}`,
        true,
      );
    } finally {
      this.busy = false;
      this.runButton.disabled = false;
      if (this.modelSel) this.modelSel.select.disabled = false;
    }
  }

  /**
   * The decoder: `action` "run" (read the prompt), "next" (add one token: `extra.token`, or
   * -1 for the model's choice) or "generate" (`extra.n_new` tokens), in the Python worker
   * (models/own_decoder.py); the maps go to the explorer's views with the newest token's
   * row as the head view's query.
   */
  async step(action, extra) {
    if (this.busy) return;
    const text = this.text.value;
    const d = this.own.decoder;
    this.error.hidden = true;
    if (action === "run" && !text.trim()) {
      this._fail(this.modes.decoder.empty, false);
      this.text.focus();
      return;
    }
    if (action === "run" && this._over()) {
      this._fail(
        `Your prompt is ${count(text.length)} characters, more than the ${count(this.modes.decoder.maxLength)} this box reads: shorten it and press Run.`,
        false,
      );
      this.text.focus();
      return;
    }
    const last = this.decoderResult;
    // A step continues the text shown: the prompt it was run with and the tokens so far.
    const prompt = action === "run" || !last ? text : last.prompt;
    if (action !== "run" && !last) return this.step("run", {});
    this.retryAction = () => this.step(action, extra);
    this.busy = true;
    this.runButton.disabled = true;
    this.decoder.busy = true;
    if (this.modelSel) this.modelSel.select.disabled = true;
    this.root.dataset.state = "loading";
    const t0 = performance.now();
    try {
      const urls = await this._files("decoder");
      const answer = await this._python(d.source, {
        text: prompt,
        action,
        ids: action === "run" ? "" : last.result.ids.join(","),
        ...this.decoder.params(),
        ...extra,
        weights_url: urls.weights,
        tokenizer_url: urls.tokenizer,
        weights_sha256: d.weights.sha256,
      });
      const t1 = performance.now();
      if (!answer.ok) {
        this._fail(answer.error, false);
        return;
      }
      const result = answer.result;
      const { asset, run } = result;
      this.decoderResult = { prompt, result };
      this.runs++;
      this.pieces.hidden = false;
      this.pieces.textContent = `Tokens (${asset.seq_len}): ${result.pieces.join(" · ")}`;
      const load = run.load_ms ? `, weights loaded in ${(run.load_ms / 1000).toFixed(1)} s` : "";
      const what =
        action === "run"
          ? `Read ${asset.seq_len} tokens in ${Math.round(run.forward_ms)} ms`
          : `Added ${result.added.length} token${result.added.length === 1 ? "" : "s"} in ${Math.round(run.forward_ms)} ms (${Math.round(run.ms_per_token)} ms a token, with the KV cache)`;
      this._status(`${what}${load}, in your browser. The maps below are your text's.`);
      this.root.dataset.state = "ready";
      this.decoder.show(result);
      this.map.showOwn(asset, { query: asset.seq_len - 1 });
      const t2 = performance.now();
      this.lastRun = {
        ...run,
        mode: "decoder",
        action,
        python_ms: t1 - t0,
        draw_ms: t2 - t1,
        total_ms: t2 - t0,
      };
    } catch (err) {
      this._fail(
        `${err.message}. ${err.retry ? "The rest of the page still works; press Retry to try the download again." : "Press Retry."}`,
        true,
      );
    } finally {
      this.busy = false;
      this.runButton.disabled = false;
      this.decoder.busy = false;
      if (this.modelSel) this.modelSel.select.disabled = false;
    }
  }
}

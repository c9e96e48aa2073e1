// The coordinator of one attention map (a ```attention-map fence, emitted by
// build_scripts/hooks/attention_map.py): it holds the view's state, loads the assets (maps.js),
// and draws the view it names: the grid of every head (grid.js) or one or two heads large
// (head-panel.js) with, on the explorer page, the Python recompute (recompute.js). On the
// explorer page the state also lives in the address (url-state.js); in a lesson the map
// loads as the reader gets near it. Nothing here computes attention.
import { whenNear } from "../runtime/page.js";
import { el, nextTask } from "../ui/dom.js";
import { loadAsset, loadIndex } from "../maps.js";
import { HeadGrid, rememberFocus } from "./grid.js";
import { HeadCache } from "./head-cache.js";
import { HeadPanel } from "./head-panel.js";
import { button, checkbox, modelLabel, select, statusLine } from "./parts.js";
import { RecomputePanel } from "./recompute.js";
import {
  assetPath,
  clampToAsset,
  entryFor,
  fitToIndex,
  initialState,
  matchQuery,
  modelsFor,
} from "./state.js";
import { readUrl, writeUrl } from "./url-state.js";

let uid = 0;
// The pickers' value while the reader's own sentence is shown (not a slug or sentence id).
const OWN_OPTION = "";

/** An attention map: the explorer page's (explorer: true) or a lesson's embed. */
export class AttentionMap {
  /**
   * @param {HTMLElement} root the placeholder (emptied and filled)
   * @param {object} config its data-config: {model, sentence, layer, head, query, view,
   *   explorer, exclude_first, compare, caption, asset, model_id, recompute}
   */
  constructor(root, config) {
    this.root = root;
    this.config = config;
    this.id = `attn-map-${++uid}`;
    this.explorer = Boolean(config.explorer);
    this.state = initialState(config, this.explorer);
    this.timings = { started: performance.now() };
    this.index = null;
    this.cache = null;
    this.loadToken = 0;
    root.textContent = "";
    root.attnMap = this;
    this._build();
    if (this.explorer) {
      readUrl(this.state);
      // Back and Forward between the grid and a head (see _writeUrl).
      this.onPopState = () => {
        if (!this.root.isConnected || !this.cache) return;
        const was = { ...this.state };
        readUrl(this.state);
        const s = this.state;
        if (s.model !== was.model || s.sentence !== was.sentence) return this.loadSentence();
        const fromHead = was.view === "head" && s.view === "model";
        // Back from a head: the grid keeps that head as its focused one.
        if (fromHead) Object.assign(s, { layer: was.layer, head: was.head });
        this.render();
        if (fromHead) {
          this.gridView.focusCurrent();
          // Material's instant navigation may redraw the page for this URL: its new map
          // focuses the same head when it first draws the grid.
          rememberFocus(was.layer, was.head);
        }
      };
      window.addEventListener("popstate", this.onPopState);
      this.start();
    } else {
      // In a lesson the map downloads as the reader gets near it (half a screen ahead),
      // like the labs, so the lesson itself stays light.
      this._setStatus(
        `The attention map of ${modelLabel({ id: config.model_id || config.model, source: config.model_source })} on “${config.sentence}” loads as you reach it.`,
        false,
      );
      root.dataset.state = "waiting";
      this.observer = whenNear([root], () => this.start());
    }
  }

  // --- DOM --------------------------------------------------------------------
  _build() {
    const id = (name) => `${this.id}-${name}`;
    this.top = el("div", "attn-map__controls attn-map__controls--top");
    if (this.explorer) {
      this.modelSel = select("Model", id("model"), []);
      this.sentenceSel = select("Sentence", id("sentence"), []);
      this.sentenceSel.wrap.classList.add("attn-map__field--sentence");
      this.modelSel.select.addEventListener("change", () =>
        this.setState({ model: this.modelSel.select.value }, { load: true }),
      );
      this.sentenceSel.select.addEventListener("change", () =>
        this.setState({ sentence: this.sentenceSel.select.value }, { load: true }),
      );
      this.top.append(this.modelSel.wrap, this.sentenceSel.wrap);
    }
    // View switch: two toggle buttons.
    this.viewButtons = {};
    const views = el("div", "attn-map__views");
    views.setAttribute("role", "group");
    views.setAttribute("aria-label", "View");
    for (const [view, text] of [
      ["model", "All heads"],
      ["head", "One head"],
    ]) {
      const b = button(text, "attn-map__view");
      b.addEventListener("click", () => this.setState({ view }));
      this.viewButtons[view] = b;
      views.append(b);
    }
    this.top.append(views);
    this.sinkBox = checkbox(this.top, id("sinks"), "Scale colours without the first key", () =>
      this.setState({ exclude_first: this.sinkBox.checked }),
    );
    this.sinkBox.title =
      "Many heads park most of their weight on the first token (an attention sink); " +
      "scaling by the other keys makes the rest of the pattern visible.";
    if (this.explorer) {
      this.compareBox = checkbox(this.top, id("compare"), "Compare with a second head", () =>
        this.setCompare(this.compareBox.checked ? {} : null),
      );
    }

    this.sentence = el("p", "attn-map__sentence");
    this.statusLine = statusLine("attn-map__status", "Loading the attention map");
    this.error = el("div", "attn-map__error");
    this.error.setAttribute("role", "alert");
    this.errorText = el("p");
    this.retry = button("Retry", "attn-map__retry");
    this.retry.addEventListener("click", () => (this.index ? this.loadSentence() : this.start()));
    this.error.append(this.errorText, this.retry);
    this.error.hidden = true;
    this.notice = el("p", "attn-map__notice");
    this.notice.hidden = true;

    // Model view: the grid of every head.
    this.gridView = new HeadGrid(this);
    this.modelView = this.gridView.root;

    // Head view.
    this.headView = el("div", "attn-map__head");
    this.panels = el("div", "attn-map__panels");
    this.main = new HeadPanel(this, "main");
    this.panels.append(this.main.root);
    this.recompute = new RecomputePanel(
      this.explorer ? this.config.recompute : null,
      (layer, head) => this.setState({ layer, head, query: null }),
    );
    this.headView.append(this.panels, this.recompute.root);

    if (this.config.caption) this.root.append(el("p", "attn-map__caption", this.config.caption));
    // The explorer's "Your own sentence" (when the build has the model's files), imported
    // only here so that lessons' maps do not carry its code.
    this.ownPanel = null;
    if (this.explorer && this.config.own) {
      const slot = el("div", "attn-own-slot");
      this.root.append(slot);
      import("./own-sentence.js").then(
        ({ OwnSentencePanel }) => {
          if (!slot.isConnected) return;
          this.ownPanel = new OwnSentencePanel(this, this.config.own);
          slot.replaceWith(this.ownPanel.root);
        },
        (err) => {
          slot.textContent = `“Your own sentence” could not load: ${err.message}`;
        },
      );
    }
    this.root.append(
      this.top,
      this.sentence,
      this.notice,
      this.statusLine.root,
      this.error,
      this.modelView,
      this.headView,
    );
    if (!this.explorer) {
      this.open = el("a", "attn-map__open", "Open in the explorer");
      this.root.append(this.open);
    }
    this.modelView.hidden = true;
    this.headView.hidden = true;
  }

  _setStatus(text, busy) {
    this.statusLine.show(text, busy ? 0 : null);
    this.root.dataset.state = busy ? "loading" : "ready";
  }

  _showError(message) {
    this.error.hidden = false;
    this.errorText.textContent = message;
    this.root.dataset.state = "error";
    this.statusLine.show("");
  }

  // --- Loading -----------------------------------------------------------------
  async start() {
    if (!this.explorer) return this.loadSentence();
    this._setStatus("Loading the list of models and sentences…", true);
    // The page's own asset (checked at build time) downloads alongside the index; one a
    // link names waits for the index, which says whether it exists.
    if (this.state.model === this.config.model && this.state.sentence === this.config.sentence)
      loadAsset(this.config.asset).catch(() => {});
    try {
      this.index = await loadIndex();
    } catch (err) {
      this._showError(`${err.message}. Press Retry.`);
      return;
    }
    if (!this.root.isConnected) return;
    this.linkNotes = fitToIndex(this.state, this.index, this.config);
    this._note(this.linkNotes);
    this._fillPickers();
    await this.loadSentence();
  }

  /** The models with an asset of `sentence` (the compare panel's model picker). */
  modelsFor(sentence) {
    return modelsFor(this.index, sentence);
  }

  _note(notes) {
    this.notice.hidden = notes.length === 0;
    this.notice.textContent = notes.length
      ? `This link asked for something that is not available (${notes.join("; ")}); showing what is closest.`
      : "";
  }

  /** Fill the model and sentence pickers from the index; with `own` (the reader's own
   * asset, showOwn) the sentence picker shows it as its own option, and so does the model
   * picker for a model the index does not have. Picking anything else loads that. */
  _fillPickers(own = null) {
    const option = ([v, t]) => {
      const o = el("option", null, t);
      o.value = v;
      return o;
    };
    const models = this.index.models.map((m) => [
      m.slug,
      `${modelLabel(m)}, ${m.causal ? "decoder" : "encoder"}`,
    ]);
    const have = new Set(
      this.index.assets.filter((a) => a.model === this.state.model).map((a) => a.sentence),
    );
    const sentences = this.index.sentences
      .filter((s) => have.has(s.id))
      .map((s) => [s.id, `${s.id}: ${s.text.length > 48 ? `${s.text.slice(0, 47)}…` : s.text}`]);
    this.modelSel.select.replaceChildren(...models.map(option));
    this.sentenceSel.select.replaceChildren(...sentences.map(option));
    this.modelSel.select.value = this.state.model;
    this.sentenceSel.select.value = this.state.sentence;
    if (!own) return;
    const text = own.sentence.text;
    const short = text.length > 40 ? `${text.slice(0, 39)}…` : text;
    const yours = own.sentence.id === "your-letters" ? "Your letters" : "Your sentence";
    this.sentenceSel.select.prepend(option([OWN_OPTION, `${yours}: ${short}`]));
    this.sentenceSel.select.value = OWN_OPTION;
    if (own.model.slug !== this.state.model) {
      const kind = own.model.causal ? "decoder" : "encoder";
      this.modelSel.select.prepend(option([OWN_OPTION, `${modelLabel(own.model)}, ${kind}`]));
      this.modelSel.select.value = OWN_OPTION;
    }
  }

  async loadSentence() {
    const token = ++this.loadToken;
    const s = this.state;
    this.error.hidden = true;
    const entry = entryFor(this.index, s.model, s.sentence);
    const size = entry ? ` (${Math.round(entry.bytes / 1000)} kB)` : "";
    this._setStatus(`Downloading the attention map of ${s.model} on “${s.sentence}”${size}…`, true);
    this.timings.requested = performance.now();
    let asset;
    let compare = null;
    try {
      asset = await loadAsset(assetPath(this.index, s.model, s.sentence));
      if (s.compare && s.compare.model !== s.model)
        compare = await loadAsset(assetPath(this.index, s.compare.model, s.sentence));
      // The asset was parsed and checked in this task; the views draw in the next one
      // (issue 24: no task over 100 ms).
      await nextTask();
    } catch (err) {
      if (token !== this.loadToken || !this.root.isConnected) return;
      this.modelView.hidden = true;
      this.headView.hidden = true;
      this._showError(
        `${err.message}. ${this.explorer ? "Pick another sentence or model, or press Retry." : "Press Retry."}`,
      );
      return;
    }
    if (token !== this.loadToken || !this.root.isConnected) return;
    this.timings.loaded = performance.now();
    delete this.root.dataset.own;
    this.cache = new HeadCache(asset);
    this.compareCache = compare ? new HeadCache(compare) : null;
    const notes = clampToAsset(this.state, asset, compare);
    if (notes.length) this._note([...(this.linkNotes || []), ...notes]);
    this.linkNotes = [];
    this.sentence.textContent = `Sentence “${asset.sentence.id}”: ${asset.sentence.text}`;
    const label = modelLabel(asset.model);
    this.root.setAttribute("aria-label", `Attention map: ${label}, ${asset.sentence.id}`);
    this._setStatus(
      `${label} (${asset.model.causal ? "decoder: each token sees only earlier ones" : "encoder: every token sees every token"}), ` +
        `${asset.model.n_layers} layers × ${asset.model.n_heads} heads, ${asset.seq_len} tokens.`,
      false,
    );
    this.render();
  }

  /** Draw `asset`, the reader's own sentence computed in Python (own-sentence.js), in the
   * same views as a precomputed one; the pickers say so (_fillPickers). Picking a sentence
   * or model loads that one again. A model of the index becomes the picked model; another
   * (the induction-head model) leaves the picked one as it was. */
  showOwn(asset, { query = null } = {}) {
    this.loadToken++; // a precomputed sentence still downloading must not replace it
    this.error.hidden = true;
    const slug = asset.model.slug;
    if (this.index) {
      if (this.index.models.some((m) => m.slug === slug)) this.state.model = slug;
      this._fillPickers(asset);
    }
    if (this.state.compare) this.state.compare.model = this.state.model;
    this.cache = new HeadCache(asset);
    this.compareCache = null;
    this.state.query = null;
    clampToAsset(this.state, asset, null);
    if (query !== null && query < asset.seq_len) this.state.query = query;
    const yours = asset.sentence.id === "your-letters" ? "Your letters" : "Your sentence";
    this.sentence.textContent = `${yours}: ${asset.sentence.text}`;
    const label = modelLabel(asset.model);
    this.root.setAttribute("aria-label", `Attention map: ${label}, ${yours.toLowerCase()}`);
    this._setStatus(
      `${label} computed in your browser (${asset.model.causal ? "decoder: each token sees only earlier ones" : "encoder: every token sees every token"}), ` +
        `${asset.model.n_layers} layers × ${asset.model.n_heads} heads, ${asset.seq_len} tokens.`,
      false,
    );
    this.root.dataset.own = "true";
    this.render();
  }

  // --- State -------------------------------------------------------------------
  /** Merge `changes` into the state, then redraw (or reload) and update the URL. */
  setState(changes, { load = false, redraw = true } = {}) {
    Object.assign(this.state, changes);
    if (load) {
      if (this.explorer) {
        this._note([]);
        // A model without this sentence: keep the model, take its first sentence.
        if (!entryFor(this.index, this.state.model, this.state.sentence))
          this.state.sentence = this.index.assets.find(
            (a) => a.model === this.state.model,
          ).sentence;
        // A comparison keeps its model when that model has the sentence too (the same
        // sentence across two models), else it compares within the picked model.
        const cmp = this.state.compare;
        if (cmp && !entryFor(this.index, cmp.model, this.state.sentence))
          cmp.model = this.state.model;
        this._fillPickers();
      }
      this.state.query = null;
      this._writeUrl();
      return this.loadSentence();
    }
    // render writes the address too: once is enough (each write took 20-45 ms at 4x CPU
    // throttling).
    if (redraw) this.render();
    else this._writeUrl();
  }

  setCompare(changes) {
    if (changes === null) this.state.compare = null;
    else {
      const before = this.state.compare;
      this.state.compare = {
        model: this.state.model,
        layer: this.state.layer,
        head: (this.state.head + 1) % this.cache.asset.model.n_heads,
        ...before,
        ...changes,
      };
      if (changes.model && changes.model !== before?.model) {
        this._writeUrl();
        return this.loadSentence();
      }
    }
    this.render();
    this._writeUrl();
  }

  _writeUrl() {
    writeUrl(this.state, { explorer: this.explorer, link: this.open });
  }

  // --- Drawing -----------------------------------------------------------------
  render() {
    if (!this.cache) return;
    const s = this.state;
    this.error.hidden = true;
    this.sinkBox.checked = s.exclude_first;
    if (this.compareBox) this.compareBox.checked = Boolean(s.compare);
    for (const [view, b] of Object.entries(this.viewButtons))
      b.setAttribute("aria-pressed", String(view === s.view));
    // From the grid to a head the page restyles and relays out: the panels draw after
    // that frame, not inside this task (issue 24: no task over 100 ms).
    const opening = s.view === "head" && this.shownView === "model";
    this.shownView = s.view;
    this.modelView.hidden = s.view !== "model";
    this.headView.hidden = s.view !== "head";
    if (s.view === "model") this.gridView.render();
    else this.renderHead({ later: opening });
    this._writeUrl();
  }

  /** Show the head view's panels; `later`: draw their pictures after the next frame. */
  renderHead({ later = false } = {}) {
    const t0 = performance.now();
    const s = this.state;
    // Columns first: each heatmap sizes its cells to the width it is given.
    if (s.compare && !this.comparePanel) {
      this.comparePanel = new HeadPanel(this, "compare");
      this.panels.append(this.comparePanel.root);
    } else if (!s.compare && this.comparePanel) {
      this.comparePanel.destroy();
      this.comparePanel.root.remove();
      this.comparePanel = null;
    }
    this.panels.classList.toggle("attn-map__panels--two", Boolean(s.compare));
    this.main.show(this.cache, s.layer, s.head, s.query, s.exclude_first, { later });
    if (this.comparePanel) {
      const other =
        this.compareCache && s.compare.model !== s.model ? this.compareCache : this.cache;
      // Another model has other tokens: its query is the token over the same characters.
      this.comparePanel.show(
        other,
        s.compare.layer,
        s.compare.head,
        matchQuery(this.cache.asset, this.main.query, other.asset),
        s.exclude_first,
        { later },
      );
    }
    this.recompute.show(this.cache.asset, s.layer, s.head);
    this.timings.head = performance.now() - t0;
  }

  /** Show head (layer, head) large: used by the benchmark to time a switch. */
  showHead(layer, head) {
    this.setState({ view: "head", layer, head });
    return this.timings.head;
  }

  destroy() {
    this.loadToken++;
    if (this.onPopState) window.removeEventListener("popstate", this.onPopState);
    this.observer?.disconnect();
    this.main.destroy();
    this.comparePanel?.destroy();
    this.recompute.destroy();
  }
}

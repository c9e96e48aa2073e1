// The attention-map explorer: real models' precomputed attention (docs/assets/attention/),
// as a grid of every layer and head, one head large with its token lines, two heads side by
// side, and (on the explorer page) a recompute panel run by Python.
//
// Placeholders come from ```attention-map fences (build_scripts/map_fences.py):
// <div class="attn-map" data-config="{model, sentence, layer, head, query, view, explorer,
// exclude_first, compare, caption, asset, model_id, recompute}">. On the explorer page
// (explorer: true) the view's state also lives in the URL. Weights are decoded by
// attention-assets.js; nothing here computes attention (the recompute panel asks Python).
(function () {
  "use strict";
  const AttnLabs = window.AttnLabs;
  const { el, Heatmap, TokenLines, viridis } = AttnLabs;
  const { onEveryPage, pruneDetached, placeholderConfig, whenNear } = AttnLabs;
  const Assets = window.AttnAssets;

  // Head statistics stored in each asset (build_scripts/precompute_attention.py).
  const STATS = {
    previous_token: {
      label: "Previous-token score",
      help: "mean weight a query gives the token just before it",
      high: true,
    },
    first_token: {
      label: "First-token score",
      help: "mean weight on the first token (often a resting place: an attention sink)",
      high: true,
    },
    self: { label: "Self score", help: "mean weight a query gives itself", high: true },
    induction: {
      label: "Induction score",
      help: "weight on the token after an earlier copy of the current token",
      high: true,
    },
    entropy_bits: {
      label: "Mean entropy (bits)",
      help: "how spread out each row is: 0 bits looks at one key; more bits, more keys",
      high: false,
    },
  };
  const HINT = "Point at a cell, or focus the heatmap and use the arrow keys, to read its weight.";
  const URL_KEYS = ["model", "sentence", "view", "layer", "head", "query", "stat", "order"];
  const fmt = (x, digits = 3) => (x === null || x === undefined ? "n/a" : x.toFixed(digits));
  const modelName = (id) => id.split("/").pop();
  let uid = 0;
  let refocus = null; // {href, layer, head}: the head to focus in a grid redrawn after Back

  // --- Colours of the thumbnails: the heatmap's viridis ramp as RGB bytes. -----------
  let lut = null;
  function rgbRamp() {
    if (!lut) {
      lut = new Uint8ClampedArray(256 * 3);
      for (let i = 0; i < 256; i++) {
        const c = d3.color(viridis(i / 255)).rgb();
        lut.set([c.r, c.g, c.b], i * 3);
      }
    }
    return lut;
  }

  /** Draw one head's weights (n x n, [query, key]) as n x n pixels; CSS scales them up. */
  function drawThumbnail(canvas, w, n, vmax, causal) {
    canvas.width = n;
    canvas.height = n;
    const ctx = canvas.getContext("2d");
    const img = ctx.createImageData(n, n);
    const px = img.data;
    const ramp = rgbRamp();
    for (let q = 0; q < n; q++) {
      for (let k = 0; k < n; k++) {
        const i = q * n + k;
        if (causal && k > q) continue; // masked: transparent, the page shows through
        const j = Math.round(Math.min(1, w[i] / vmax) * 255) * 3;
        px[4 * i] = ramp[j];
        px[4 * i + 1] = ramp[j + 1];
        px[4 * i + 2] = ramp[j + 2];
        px[4 * i + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
  }

  /** Decoded heads of one asset, with the colour-scale top with and without key 0. */
  class HeadCache {
    constructor(asset) {
      this.asset = asset;
      this.n = asset.seq_len;
      this.causal = asset.model.causal;
      this.heads = new Map();
    }

    get(layer, head) {
      const key = `${layer}:${head}`;
      if (!this.heads.has(key)) {
        const w = Assets.decodeHead(this.asset, layer, head);
        const n = this.n;
        // Scale top without the first key: the largest weight on any other key.
        let noFirst = 0;
        for (let q = 0; q < n; q++)
          for (let k = 1; k < n; k++) if (w[q * n + k] > noFirst) noFirst = w[q * n + k];
        this.heads.set(key, { w, vmaxNoFirst: noFirst > 0 ? noFirst : 1 });
      }
      return this.heads.get(key);
    }

    vmax(entry, excludeFirst) {
      return excludeFirst ? entry.vmaxNoFirst : 1;
    }

    row(layer, head, q) {
      return this.get(layer, head).w.subarray(q * this.n, (q + 1) * this.n);
    }
  }

  function select(label, id, options) {
    const wrap = el("div", "attn-map__field");
    const lbl = el("label", null, label);
    const s = el("select");
    s.id = id;
    lbl.htmlFor = id;
    for (const [value, text] of options) {
      const o = el("option", null, text);
      o.value = String(value);
      s.append(o);
    }
    wrap.append(lbl, s);
    return { wrap, select: s };
  }

  /** A labelled checkbox appended to `parent`; returns the input. */
  function checkbox(parent, id, label, onChange) {
    const wrap = el("div", "attn-map__field attn-map__field--check");
    const lbl = el("label");
    const box = el("input");
    box.type = "checkbox";
    box.id = id;
    lbl.htmlFor = id;
    lbl.append(box, el("span", null, label));
    box.addEventListener("change", onChange);
    wrap.append(lbl);
    parent.append(wrap);
    return box;
  }

  function button(text, className = "") {
    const b = el("button", `md-button attn-map__button ${className}`.trim(), text);
    b.type = "button";
    return b;
  }

  // --- One head, large ------------------------------------------------------------
  class HeadPanel {
    /**
     * @param {AttentionMap} map the explorer that owns this panel
     * @param {"main"|"compare"} role the compare panel can pick its own model
     */
    constructor(map, role) {
      this.map = map;
      this.role = role;
      this.id = `${map.id}-${role}`;
      this.root = el("section", `attn-map__panel attn-map__panel--${role}`);
      this.root.setAttribute("aria-labelledby", `${this.id}-title`);
      this.title = el("p", "attn-map__title");
      this.title.id = `${this.id}-title`;
      this.controls = el("div", "attn-map__controls");
      this.stats = el("p", "attn-map__stats");
      const figure = el("div", "attn-map__figure");
      this.heatmap = new Heatmap(figure, {
        label: "Attention weights of one head (set when its map has loaded)",
        onSelect: (q, k) => {
          this.focusCell = [q, k];
          this.describe(q, k);
          if (q !== this.query) this.setQuery(q);
        },
        onHover: (q, k) => this._hover(q, k),
      });
      // The hovered cell's weight, next to the pointer (the line below says it for
      // screen readers and keyboards).
      this.tip = el("div", "attn-map__tip");
      this.tip.setAttribute("aria-hidden", "true");
      this.tip.hidden = true;
      figure.append(this.tip);
      this.info = el("p", "attn-map__cell");
      this.info.setAttribute("aria-live", "polite");
      this.linesHead = el("p", "attn-map__lines-head");
      const linesBox = el("div", "attn-map__lines-scroll");
      this.lines = new TokenLines(linesBox, {
        label: "Query tokens: pick one to draw its lines to every key",
        onQuery: (q) => this.setQuery(q),
      });
      this.details = el("details", "attn-lab__table attn-map__table");
      this.details.append(el("summary", null, "Show as text: each query's top keys with weights"));
      this.table = el("table", "attn-lab__rows");
      const scroller = el("div", "attn-lab__table-scroll");
      scroller.tabIndex = 0;
      scroller.setAttribute("role", "region");
      scroller.setAttribute("aria-label", "Each query's top keys with weights");
      scroller.append(this.table);
      this.details.append(scroller);
      this.root.append(
        this.title,
        this.controls,
        this.stats,
        figure,
        this.info,
        this.linesHead,
        linesBox,
        this.details,
      );
      this.cache = null;
      this.query = null;
    }

    /** Rebuild the model/layer/head pickers for `asset` (only when the model changes). */
    _controls(asset) {
      const { n_layers, n_heads } = asset.model;
      const key = `${asset.model.slug}:${n_layers}:${n_heads}`;
      if (this.controlsKey === key) return;
      this.controlsKey = key;
      const parts = [];
      if (this.role === "compare" && this.map.index) {
        const models = this.map.modelsFor(this.map.state.sentence);
        const m = select(
          "Model",
          `${this.id}-model`,
          models.map((x) => [x.slug, modelName(x.id)]),
        );
        m.select.value = asset.model.slug;
        m.select.addEventListener("change", () => this.map.setCompare({ model: m.select.value }));
        parts.push(m.wrap);
      }
      const range = (count, word) => Array.from({ length: count }, (_, i) => [i, `${word} ${i}`]);
      this.layerSel = select("Layer", `${this.id}-layer`, range(n_layers, "Layer"));
      this.headSel = select("Head", `${this.id}-head`, range(n_heads, "Head"));
      this.layerSel.select.addEventListener("change", () =>
        this._pick(Number(this.layerSel.select.value), this.head),
      );
      this.headSel.select.addEventListener("change", () =>
        this._pick(this.layer, Number(this.headSel.select.value)),
      );
      const prev = button("◀ Previous head", "attn-map__step");
      const next = button("Next head ▶", "attn-map__step");
      prev.addEventListener("click", () => this._step(-1));
      next.addEventListener("click", () => this._step(1));
      parts.push(this.layerSel.wrap, this.headSel.wrap, prev, next);
      this.controls.replaceChildren(...parts);
    }

    _step(delta) {
      const { n_layers, n_heads } = this.cache.asset.model;
      const total = n_layers * n_heads;
      const i = (this.layer * n_heads + this.head + delta + total) % total;
      this._pick(Math.floor(i / n_heads), i % n_heads);
    }

    _pick(layer, head) {
      if (this.role === "compare") this.map.setCompare({ layer, head });
      else this.map.setState({ layer, head });
    }

    /** Show head (layer, head) of `cache`'s asset; query null picks the first token. */
    show(cache, layer, head, query, excludeFirst) {
      const asset = cache.asset;
      this.cache = cache;
      this.layer = layer;
      this.head = head;
      this.excludeFirst = excludeFirst;
      this._controls(asset);
      this.layerSel.select.value = String(layer);
      this.headSel.select.value = String(head);
      const tokens = asset.tokens.text;
      const n = asset.seq_len;
      const name = modelName(asset.model.id);
      this.title.textContent = `${name} · layer ${layer}, head ${head} · sentence “${asset.sentence.id}”`;
      const s = asset.head_stats;
      this.stats.textContent = Object.entries(STATS)
        .map(([key, st]) => `${st.label}: ${fmt(s[key]?.[layer][head] ?? null)}`)
        .join(" · ");
      const entry = cache.get(layer, head);
      const vmax = cache.vmax(entry, excludeFirst);
      const w = entry.w;
      const values = Array.from({ length: n }, (_, q) => w.subarray(q * n, (q + 1) * n));
      this.heatmap.canvas.setAttribute(
        "aria-label",
        `Attention weights of ${name}, layer ${layer}, head ${head}: one row per query token, ` +
          "one column per key token. Focus and use the arrow keys to read cells; " +
          "the table below lists each query's top keys.",
      );
      this.heatmap.setData({
        rowLabels: tokens,
        colLabels: tokens,
        values,
        masked: asset.model.causal
          ? Array.from({ length: n }, (_, q) => Array.from({ length: n }, (_, k) => k > q))
          : null,
        vmax,
      });
      this._table(values, tokens);
      this.query = null;
      this.setQuery(query ?? 0, { quiet: true });
      if (this.focusCell && this.focusCell[0] < n && this.focusCell[1] < n)
        this.describe(...this.focusCell);
      else this.describe(-1, -1);
    }

    setQuery(q, { quiet = false } = {}) {
      const asset = this.cache.asset;
      const n = asset.seq_len;
      this.query = Math.max(0, Math.min(n - 1, q));
      const tokens = asset.tokens.text;
      const entry = this.cache.get(this.layer, this.head);
      const visible = asset.model.causal
        ? Array.from({ length: n }, (_, k) => k <= this.query)
        : null;
      this.lines.setData(
        tokens,
        (qq) => this.cache.row(this.layer, this.head, qq),
        this.query,
        this.cache.vmax(entry, this.excludeFirst),
        visible,
      );
      this.table.querySelectorAll("tbody tr").forEach((tr, q) => {
        if (q === this.query) tr.setAttribute("aria-current", "true");
        else tr.removeAttribute("aria-current");
      });
      this.linesHead.textContent = `Lines from query “${tokens[this.query]}” (${this.query}) to every key; thicker and more opaque means more weight.`;
      if (!quiet && this.role === "main")
        this.map.setState({ query: this.query }, { redraw: false });
    }

    _hover(q, k) {
      if (q < 0) {
        this.tip.hidden = true;
        return this.describe(...(this.focusCell || [-1, -1]));
      }
      this.describe(q, k);
      const t = this.cache.asset.tokens.text;
      const w = this.cache.get(this.layer, this.head).w[q * this.cache.n + k];
      this.tip.textContent = `${t[q]} → ${t[k]}: ${w.toFixed(4)}`;
      const canvas = this.heatmap.canvas.getBoundingClientRect();
      const box = this.tip.parentElement.getBoundingClientRect();
      const c = this.heatmap.cellCentre(q, k);
      this.tip.style.left = `${canvas.left - box.left + c.x}px`;
      this.tip.style.top = `${canvas.top - box.top + c.y - this.heatmap.layout.cell / 2 - 4}px`;
      this.tip.hidden = false;
    }

    /** Describe cell (q, k) in the live line below the heatmap; (-1, -1) shows the hint. */
    describe(q, k) {
      if (q < 0 || !this.cache) {
        this.info.textContent = HINT;
        delete this.info.dataset.weight;
        delete this.info.dataset.cell;
        return;
      }
      const asset = this.cache.asset;
      const t = asset.tokens.text;
      const w = this.cache.get(this.layer, this.head).w[q * asset.seq_len + k];
      this.info.dataset.weight = String(w);
      this.info.dataset.cell = `${q},${k}`;
      this.info.textContent =
        asset.model.causal && k > q
          ? `Query “${t[q]}” (${q}) cannot see key “${t[k]}” (${k}): masked, weight 0.`
          : `Query “${t[q]}” (${q}) → key “${t[k]}” (${k}): weight ${w.toFixed(4)}.`;
    }

    _table(values, tokens) {
      const head = el("tr");
      for (const h of ["Query", "Top keys (weight)"]) {
        const th = el("th", null, h);
        th.scope = "col";
        head.append(th);
      }
      const thead = el("thead");
      thead.append(head);
      const tbody = el("tbody");
      values.forEach((row, q) => {
        const order = Array.from(row.keys())
          .filter((k) => !(this.cache.asset.model.causal && k > q))
          .sort((a, b) => row[b] - row[a])
          .slice(0, 3);
        const tr = el("tr");
        tr.append(
          el("td", null, `${tokens[q]} (${q})`),
          el("td", null, order.map((k) => `${tokens[k]} (${k}) ${row[k].toFixed(3)}`).join("; ")),
        );
        tbody.append(tr);
      });
      this.table.replaceChildren(thead, tbody);
    }

    destroy() {
      this.heatmap.destroy();
      this.lines.destroy();
    }
  }

  // --- The whole map ----------------------------------------------------------------
  class AttentionMap {
    constructor(root, config) {
      this.root = root;
      this.config = config;
      this.id = `attn-map-${++uid}`;
      this.explorer = Boolean(config.explorer);
      this.state = {
        model: config.model,
        sentence: config.sentence,
        view: config.view || (this.explorer ? "model" : "head"),
        layer: config.layer ?? 0,
        head: config.head ?? 0,
        query: config.query ?? null,
        stat: "previous_token",
        order: "layer",
        exclude_first: Boolean(config.exclude_first),
        compare: config.compare ? { model: config.model, ...config.compare } : null,
      };
      this.timings = { started: performance.now() };
      this.index = null;
      this.cache = null;
      this.loadToken = 0;
      root.textContent = "";
      root.attnMap = this;
      this._build();
      if (this.explorer) {
        this._readUrl();
        // Back and Forward between the grid and a head (see _writeUrl).
        this.onPopState = () => {
          if (!this.root.isConnected || !this.cache) return;
          const was = { ...this.state };
          this._readUrl();
          const s = this.state;
          if (s.model !== was.model || s.sentence !== was.sentence) return this.loadSentence();
          const fromHead = was.view === "head" && s.view === "model";
          // Back from a head: the grid keeps that head as its focused one.
          if (fromHead) Object.assign(s, { layer: was.layer, head: was.head });
          this.render();
          if (fromHead) {
            this.grid.querySelector('[tabindex="0"]')?.focus();
            // Material's instant navigation may redraw the page for this URL: its new map
            // focuses the same head when it first draws the grid.
            refocus = { href: location.href, layer: was.layer, head: was.head };
          }
        };
        window.addEventListener("popstate", this.onPopState);
        this.start();
      } else {
        // In a lesson the map downloads as the reader gets near it (half a screen ahead),
        // like the labs, so the lesson itself stays light.
        this._setStatus(
          `The attention map of ${modelName(config.model_id || config.model)} on “${config.sentence}” loads as you reach it.`,
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
      this.statusBox = el("div", "attn-map__status");
      this.statusText = el("span");
      this.statusText.setAttribute("role", "status");
      this.bar = el("progress", "attn-lab__progress");
      this.bar.setAttribute("aria-label", "Loading the attention map");
      this.statusBox.append(this.bar, this.statusText);
      this.error = el("div", "attn-map__error");
      this.error.setAttribute("role", "alert");
      this.errorText = el("p");
      this.retry = button("Retry", "attn-map__retry");
      this.retry.addEventListener("click", () => (this.index ? this.loadSentence() : this.start()));
      this.error.append(this.errorText, this.retry);
      this.error.hidden = true;
      this.notice = el("p", "attn-map__notice");
      this.notice.hidden = true;

      // Model view.
      this.modelView = el("div", "attn-map__model");
      const gridTop = el("div", "attn-map__controls");
      this.statSel = select(
        "Statistic",
        id("stat"),
        Object.entries(STATS).map(([k, s]) => [k, s.label]),
      );
      this.orderSel = select("Order", id("order"), [
        ["layer", "By layer"],
        ["ranked", "Ranked by the statistic"],
      ]);
      this.statSel.select.addEventListener("change", () =>
        this.setState({ stat: this.statSel.select.value }),
      );
      this.orderSel.select.addEventListener("change", () =>
        this.setState({ order: this.orderSel.select.value }),
      );
      gridTop.append(this.statSel.wrap, this.orderSel.wrap);
      this.statHelp = el("p", "attn-map__help");
      this.gridCaption = el("p", "attn-map__title");
      this.gridCaption.id = id("grid-caption");
      this.grid = el("div", "attn-map__grid");
      this.grid.setAttribute("role", "group");
      this.grid.setAttribute("aria-labelledby", this.gridCaption.id);
      this.grid.addEventListener("keydown", (e) => this._gridKey(e));
      this.modelView.append(this.gridCaption, gridTop, this.statHelp, this.grid);

      // Head view.
      this.headView = el("div", "attn-map__head");
      this.panels = el("div", "attn-map__panels");
      this.main = new HeadPanel(this, "main");
      this.panels.append(this.main.root);
      this.recompute = el("section", "attn-map__recompute");
      this.recompute.setAttribute("aria-label", "Recompute this head in Python");
      this.headView.append(this.panels, this.recompute);

      if (this.config.caption) this.root.append(el("p", "attn-map__caption", this.config.caption));
      this.root.append(
        this.top,
        this.sentence,
        this.notice,
        this.statusBox,
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
      this.statusText.textContent = text;
      this.bar.hidden = !busy;
      this.root.dataset.state = busy ? "loading" : "ready";
    }

    _showError(message) {
      this.error.hidden = false;
      this.errorText.textContent = message;
      this.root.dataset.state = "error";
      this.statusText.textContent = "";
      this.bar.hidden = true;
    }

    // --- Loading -----------------------------------------------------------------
    async start() {
      if (!this.explorer) return this.loadSentence();
      this._setStatus("Loading the list of models and sentences…", true);
      // The page's own asset (checked at build time) downloads alongside the index; one a
      // link names waits for the index, which says whether it exists.
      if (this.state.model === this.config.model && this.state.sentence === this.config.sentence)
        Assets.loadAsset(this.config.asset).catch(() => {});
      try {
        this.index = await Assets.loadIndex();
      } catch (err) {
        this._showError(`${err.message}. Press Retry.`);
        return;
      }
      if (!this.root.isConnected) return;
      this._checkState();
      this._fillPickers();
      await this.loadSentence();
    }

    modelsFor(sentence) {
      const slugs = new Set(
        this.index.assets.filter((a) => a.sentence === sentence).map((a) => a.model),
      );
      return this.index.models.filter((m) => slugs.has(m.slug));
    }

    _entry(model, sentence) {
      return this.index?.assets.find((a) => a.model === model && a.sentence === sentence);
    }

    /** Fall back to the configured model and sentence when a link names unknown ones. */
    _checkState() {
      const s = this.state;
      const notes = [];
      if (!this.index.models.some((m) => m.slug === s.model)) {
        notes.push(`model “${s.model}” is not among the precomputed models`);
        s.model = this._entry(this.config.model, s.sentence)
          ? this.config.model
          : this.index.models[0].slug;
      }
      if (!this._entry(s.model, s.sentence)) {
        notes.push(`there is no map of sentence “${s.sentence}” for this model`);
        s.sentence = this._entry(s.model, this.config.sentence)
          ? this.config.sentence
          : this.index.assets.find((a) => a.model === s.model).sentence;
      }
      if (s.compare?.model && !this._entry(s.compare.model, s.sentence)) {
        notes.push(`the compared model “${s.compare.model}” has no map of this sentence`);
        s.compare.model = s.model;
      }
      this.linkNotes = notes;
      this._note(notes);
    }

    _note(notes) {
      this.notice.hidden = notes.length === 0;
      this.notice.textContent = notes.length
        ? `This link asked for something that is not available (${notes.join("; ")}); showing what is closest.`
        : "";
    }

    _fillPickers() {
      const fill = (sel, items) => {
        sel.replaceChildren(
          ...items.map(([v, t]) => {
            const o = el("option", null, t);
            o.value = v;
            return o;
          }),
        );
      };
      fill(
        this.modelSel.select,
        this.index.models.map((m) => [
          m.slug,
          `${modelName(m.id)} (${m.causal ? "decoder" : "encoder"})`,
        ]),
      );
      const have = new Set(
        this.index.assets.filter((a) => a.model === this.state.model).map((a) => a.sentence),
      );
      fill(
        this.sentenceSel.select,
        this.index.sentences
          .filter((s) => have.has(s.id))
          .map((s) => [
            s.id,
            `${s.id}: ${s.text.length > 48 ? `${s.text.slice(0, 47)}…` : s.text}`,
          ]),
      );
      this.modelSel.select.value = this.state.model;
      this.sentenceSel.select.value = this.state.sentence;
    }

    _path(model, sentence) {
      return this._entry(model, sentence)?.path ?? `${model}/${sentence}.json`;
    }

    async loadSentence() {
      const token = ++this.loadToken;
      const s = this.state;
      this.error.hidden = true;
      const entry = this._entry(s.model, s.sentence);
      const size = entry ? ` (${Math.round(entry.bytes / 1000)} kB)` : "";
      this._setStatus(
        `Downloading the attention map of ${s.model} on “${s.sentence}”${size}…`,
        true,
      );
      this.timings.requested = performance.now();
      let asset;
      let compare = null;
      try {
        asset = await Assets.loadAsset(this._path(s.model, s.sentence));
        if (s.compare && s.compare.model !== s.model)
          compare = await Assets.loadAsset(this._path(s.compare.model, s.sentence));
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
      this.cache = new HeadCache(asset);
      this.compareCache = compare ? new HeadCache(compare) : null;
      this._clampState();
      this.sentence.textContent = `Sentence “${asset.sentence.id}”: ${asset.sentence.text}`;
      this._setStatus(
        `${modelName(asset.model.id)} (${asset.model.causal ? "decoder: each token sees only earlier ones" : "encoder: every token sees every token"}), ` +
          `${asset.model.n_layers} layers × ${asset.model.n_heads} heads, ${asset.seq_len} tokens.`,
        false,
      );
      this.render();
    }

    _clampState() {
      const s = this.state;
      const { n_layers, n_heads } = this.cache.asset.model;
      const notes = [];
      const clamp = (what, v, max) => {
        if (Number.isInteger(v) && v >= 0 && v < max) return v;
        notes.push(`${what} ${v} (this model has ${what}s 0–${max - 1})`);
        return 0;
      };
      s.layer = clamp("layer", s.layer, n_layers);
      s.head = clamp("head", s.head, n_heads);
      if (s.query !== null) s.query = clamp("query", s.query, this.cache.asset.seq_len);
      if (s.compare) {
        const m = (this.compareCache || this.cache).asset.model;
        s.compare.layer = clamp("layer", s.compare.layer ?? s.layer, m.n_layers);
        s.compare.head = clamp("head", s.compare.head ?? (s.head + 1) % m.n_heads, m.n_heads);
      }
      if (notes.length) this._note([...(this.linkNotes || []), ...notes]);
      this.linkNotes = [];
    }

    // --- State -------------------------------------------------------------------
    /** Merge `changes` into the state, then redraw (or reload) and update the URL. */
    setState(changes, { load = false, redraw = true } = {}) {
      Object.assign(this.state, changes);
      if (load) {
        if (this.explorer) {
          this._note([]);
          // A model without this sentence: keep the model, take its first sentence.
          if (!this._entry(this.state.model, this.state.sentence))
            this.state.sentence = this.index.assets.find(
              (a) => a.model === this.state.model,
            ).sentence;
          if (this.state.compare) this.state.compare.model = this.state.model;
          this._fillPickers();
        }
        this.state.query = null;
        this._writeUrl();
        return this.loadSentence();
      }
      if (redraw) this.render();
      this._writeUrl();
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

    _readUrl() {
      const p = new URLSearchParams(location.search);
      const int = (v) => (v !== null && /^\d+$/.test(v) ? Number(v) : v === null ? undefined : -1);
      const s = this.state;
      if (p.get("model")) s.model = p.get("model");
      if (p.get("sentence")) s.sentence = p.get("sentence");
      if (p.get("view") === "head" || p.get("view") === "model") s.view = p.get("view");
      for (const key of ["layer", "head", "query"]) {
        const v = int(p.get(key));
        if (v !== undefined) s[key] = v;
      }
      if (p.get("stat") in STATS) s.stat = p.get("stat");
      if (p.get("order") === "ranked") s.order = "ranked";
      if (p.get("sinks") === "exclude") s.exclude_first = true;
      const cmp = p.get("compare");
      if (cmp) {
        const [model, layer, head] = cmp.split(":");
        s.compare = {
          model: model || s.model,
          layer: int(layer ?? null) ?? 0,
          head: int(head ?? null) ?? 0,
        };
      }
    }

    _params() {
      const s = this.state;
      const p = new URLSearchParams();
      for (const key of URL_KEYS)
        if (s[key] !== null && s[key] !== undefined) p.set(key, String(s[key]));
      if (s.exclude_first) p.set("sinks", "exclude");
      if (s.compare) p.set("compare", `${s.compare.model}:${s.compare.layer}:${s.compare.head}`);
      return p;
    }

    _writeUrl() {
      if (this.explorer) {
        const url = `${location.pathname}?${this._params()}${location.hash}`;
        // Opening a head (or going back to the grid) is a step Back can undo; other changes
        // only update the address.
        const view = new URLSearchParams(location.search).get("view");
        if (view && view !== this.state.view) history.pushState(history.state, "", url);
        else history.replaceState(history.state, "", url);
      } else if (this.open) {
        this.open.href = new URL(`explorer/?${this._params()}`, AttnLabs.SITE_ROOT).href;
      }
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
      this.modelView.hidden = s.view !== "model";
      this.headView.hidden = s.view !== "head";
      if (s.view === "model") this.renderGrid();
      else this.renderHead();
      this._writeUrl();
    }

    renderGrid() {
      const t0 = performance.now();
      const s = this.state;
      const asset = this.cache.asset;
      const { n_layers, n_heads } = asset.model;
      const n = asset.seq_len;
      const values = asset.head_stats[s.stat];
      const stat = STATS[s.stat];
      this.statSel.select.value = s.stat;
      this.orderSel.select.value = s.order;
      this.statHelp.textContent =
        values === null
          ? `${stat.label}: not available for this sentence (no token repeats).`
          : `${stat.label}: ${stat.help}. Shown under each head; ${stat.high ? "highest" : "lowest"} marked ★.`;
      this.gridCaption.textContent = `Every head of ${modelName(asset.model.id)} on “${asset.sentence.id}”: ${n_layers} layers × ${n_heads} heads, layer after layer. Left and right arrows move between heads, up and down between layers; Enter opens a head.`;
      let order = [];
      for (let l = 0; l < n_layers; l++) for (let h = 0; h < n_heads; h++) order.push([l, h]);
      let best = null;
      if (values) {
        const v = ([l, h]) => values[l][h];
        best = order.reduce((a, b) => ((stat.high ? v(b) > v(a) : v(b) < v(a)) ? b : a));
        if (s.order === "ranked")
          order = [...order].sort((a, b) => (stat.high ? v(b) - v(a) : v(a) - v(b)));
      }
      const cells = order.map(([l, h], i) => {
        const b = el("button", "attn-map__thumb");
        b.type = "button";
        b.dataset.layer = String(l);
        b.dataset.head = String(h);
        const value = values ? values[l][h] : null;
        const mark = best && best[0] === l && best[1] === h;
        if (mark) b.classList.add("attn-map__thumb--best");
        const c = el("canvas");
        c.setAttribute("aria-hidden", "true");
        const entry = this.cache.get(l, h);
        drawThumbnail(c, entry.w, n, this.cache.vmax(entry, s.exclude_first), asset.model.causal);
        const shown = `${mark ? "★ " : ""}${fmt(value, 2)}`;
        b.append(
          c,
          el("span", "attn-map__thumb-label", `L${l} H${h}`),
          " ",
          el("span", "attn-map__thumb-value", shown),
        );
        // The name starts with the visible text (WCAG 2.5.3), then says it in words.
        b.setAttribute(
          "aria-label",
          `L${l} H${h} ${shown}: layer ${l}, head ${h}, ${stat.label.toLowerCase()} ` +
            `${fmt(value)}${mark ? ", the most extreme" : ""}`,
        );
        b.tabIndex = l === s.layer && h === s.head ? 0 : -1;
        b.addEventListener("click", () => {
          this.setState({ view: "head", layer: l, head: h, query: null });
          // Keep the reader's place: focus moves to the head that opened.
          this.main.heatmap.canvas.focus();
        });
        b.addEventListener("focus", () => {
          this.focusIndex = i;
        });
        return b;
      });
      this.grid.style.setProperty("--attn-heads", String(n_heads));
      this.grid.classList.toggle("attn-map__grid--ranked", s.order === "ranked");
      this.grid.replaceChildren(...cells);
      if (refocus && this.explorer && !this.timings.firstGrid && refocus.href === location.href) {
        const b = this.grid.querySelector(
          `[data-layer="${refocus.layer}"][data-head="${refocus.head}"]`,
        );
        refocus = null;
        b?.focus();
      }
      this.timings.grid = performance.now() - t0;
      if (!this.timings.firstGrid) {
        this.timings.firstGrid = performance.now() - this.timings.started;
        performance.mark("explorer:grid");
      }
    }

    _gridKey(event) {
      const buttons = [...this.grid.querySelectorAll("button")];
      const i = buttons.indexOf(document.activeElement);
      if (i < 0) return;
      const cols = this.cache.asset.model.n_heads;
      const step = {
        ArrowLeft: -1,
        ArrowRight: 1,
        ArrowUp: -cols,
        ArrowDown: cols,
        Home: -i,
        End: buttons.length - 1 - i,
      }[event.key];
      if (step === undefined) return;
      event.preventDefault();
      const j = Math.max(0, Math.min(buttons.length - 1, i + step));
      buttons[i].tabIndex = -1;
      buttons[j].tabIndex = 0;
      buttons[j].focus();
    }

    renderHead() {
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
      this.main.show(this.cache, s.layer, s.head, s.query, s.exclude_first);
      this.comparePanel?.show(
        this.compareCache && s.compare.model !== s.model ? this.compareCache : this.cache,
        s.compare.layer,
        s.compare.head,
        this.main.query,
        s.exclude_first,
      );
      this._recomputePanel();
      this.timings.head = performance.now() - t0;
    }

    /** Python recompute of heads whose q and k the asset carries (explorer page only). */
    _recomputePanel() {
      const rc = this.config.recompute;
      if (!this.explorer || !rc || !AttnLabs.mountLab || !AttnLabs.realHeadData) {
        this.recompute.hidden = true;
        return;
      }
      this.recompute.hidden = false;
      const asset = this.cache.asset;
      const s = this.state;
      const key = `${asset.model.slug}/${asset.sentence.id}/${s.layer}/${s.head}`;
      if (this.recomputeKey === key) return;
      this.recomputeKey = key;
      this.lab?.destroy();
      this.lab = null;
      const entry = asset.qkv.heads.find((h) => h.layer === s.layer && h.head === s.head);
      const heading = el("p", "attn-map__title", "Recompute this head in Python");
      const parts = [heading];
      if (entry) {
        parts.push(
          el(
            "p",
            null,
            `The asset carries this head's real queries and keys (the model's ${entry.reason}, over all sentences). Python rebuilds the pattern as softmax(q·kᵀ/√d_head) from them; change the scaling, the temperature or the mask and see how this real head would behave.`,
          ),
        );
        const start = button("Recompute in Python", "attn-map__start");
        start.addEventListener("click", () => {
          const box = el("div", "attn-lab");
          start.replaceWith(box);
          this.lab = AttnLabs.mountLab(box, AttnLabs.realHeadData(asset, entry, rc));
          this.lab.update({});
        });
        parts.push(start);
      } else {
        parts.push(
          el(
            "p",
            null,
            "Only a few heads carry their queries and keys in the asset: the model's strongest head of each kind, chosen once over all sentences. Pick one to recompute it:",
          ),
        );
        const list = el("ul", "attn-map__qkv");
        for (const h of asset.qkv.heads) {
          const li = el("li");
          const b = button(`Layer ${h.layer}, head ${h.head}: ${h.reason}`, "attn-map__qkv-head");
          b.addEventListener("click", () =>
            this.setState({ layer: h.layer, head: h.head, query: null }),
          );
          li.append(b);
          list.append(li);
        }
        parts.push(list);
      }
      this.recompute.replaceChildren(...parts);
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
      this.lab?.destroy();
    }
  }

  let mounted = [];
  function mountAll() {
    mounted = pruneDetached(mounted);
    for (const root of document.querySelectorAll(".attn-map:not([data-state])")) {
      const config = placeholderConfig(
        root,
        "This attention map's settings are damaged; rebuild the site.",
      );
      if (!config) continue;
      root.dataset.state = "loading";
      mounted.push(new AttentionMap(root, config));
    }
  }
  AttnLabs.AttentionMap = AttentionMap;
  onEveryPage(mountAll);
})();

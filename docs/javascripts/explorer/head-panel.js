// One head, large: its pickers, statistics, heatmap (with the hovered weight beside the
// pointer), the token lines of one query, and a text table of each query's top keys.
// The map shows a main panel and, when comparing, a second one.
import { Heatmap } from "../renderers/heatmap.js";
import { TokenLines } from "../renderers/token_lines.js";
import { dataTable } from "../ui/data-table.js";
import { afterFrame, el, nextTask } from "../ui/dom.js";
import {
  button,
  fmt,
  HINT,
  headList,
  kvGroup,
  modelLabel,
  STATS,
  select,
  statUnavailable,
} from "./parts.js";

export class HeadPanel {
  /**
   * @param {AttentionMap} map the map that owns this panel: its id, index, state,
   *   modelsFor(sentence), setState(changes) and setCompare(changes) are used
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
    this.table = dataTable({ label: "Each query's top keys with weights" });
    this.details.append(this.table.root);
    // The table is built when the reader opens it (building it with every head took 45 ms
    // of 128 rows at 4x CPU throttling): on the summary's click, before it opens, or on
    // toggle when a script opens it.
    this.details.firstChild.addEventListener("click", () => this._fillTable());
    this.details.addEventListener("toggle", () => this._fillTable());
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
    // The reader's own sentence (map.showOwn) has no precomputed twin in another model.
    const own = Boolean(this.map.root.dataset.own);
    const key = `${own ? "own:" : ""}${asset.model.slug}:${n_layers}:${n_heads}`;
    if (this.controlsKey === key) return;
    this.controlsKey = key;
    const parts = [];
    if (this.role === "compare" && this.map.index && !own) {
      const models = this.map.modelsFor(this.map.state.sentence);
      const m = select(
        "Model",
        `${this.id}-model`,
        models.map((x) => [x.slug, modelLabel(x)]),
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

  /**
   * Show head (layer, head) of `cache`'s asset; query null picks the first token. The
   * token lines are drawn in the next task, and with `later` (the view has just switched
   * from the grid) the heatmap too, after the page's next frame: at 128 tokens the whole
   * in one task took 200-300 ms at 4x CPU throttling (issue 24). The state (layer, head,
   * query) and the text are set at once.
   */
  show(cache, layer, head, query, excludeFirst, { later = false } = {}) {
    const asset = cache.asset;
    const shown = {}; // this call: a later show makes its deferred drawing moot
    this.shown = shown;
    this.cache = cache;
    this.layer = layer;
    this.head = head;
    this.excludeFirst = excludeFirst;
    this._controls(asset);
    this.layerSel.select.value = String(layer);
    this.headSel.select.value = String(head);
    const tokens = asset.tokens.text;
    const n = asset.seq_len;
    const name = modelLabel(asset.model);
    const group = kvGroup(asset.model, head);
    const shares = group
      ? ` (key/value head ${group.kv}, shared with ${headList(group.members.filter((m) => m !== head))})`
      : "";
    this.title.textContent = `${name} · layer ${layer}, head ${head}${shares} · sentence “${asset.sentence.id}”`;
    const s = asset.head_stats;
    this.stats.textContent = Object.entries(STATS)
      .map(([key, st]) => {
        const missing = statUnavailable(asset, key);
        return `${st.label}: ${missing ? missing.split(":")[0] : fmt(s[key][layer][head])}`;
      })
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
    const draw = () =>
      this.heatmap.setData({
        rowLabels: tokens,
        colLabels: tokens,
        values,
        masked: asset.model.causal
          ? Array.from({ length: n }, (_, q) => Array.from({ length: n }, (_, k) => k > q))
          : null,
        vmax,
      });
    if (later) this.heatmap.clear();
    else draw();
    this.tableFor = { values, tokens };
    if (this.details.open) this._fillTable();
    const q = Math.max(0, Math.min(n - 1, query ?? 0));
    this.query = q;
    if (this.focusCell && this.focusCell[0] < n && this.focusCell[1] < n)
      this.describe(...this.focusCell);
    else this.describe(-1, -1);
    (later ? afterFrame().then(() => this.shown === shown && draw()) : Promise.resolve())
      .then(nextTask)
      .then(() => {
        // The lines of this head and query, unless the reader has moved on meanwhile.
        if (this.shown === shown && this.query === q) this.setQuery(q, { quiet: true });
      });
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
    this.table.table.querySelectorAll("tbody tr").forEach((tr, q) => {
      if (q === this.query) tr.setAttribute("aria-current", "true");
      else tr.removeAttribute("aria-current");
    });
    this.linesHead.textContent = `Lines from query “${tokens[this.query]}” (${this.query}) to every key; thicker and more opaque means more weight.`;
    if (!quiet && this.role === "main") this.map.setState({ query: this.query }, { redraw: false });
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

  /** Build the text table of the head shown, once (see the constructor). */
  _fillTable() {
    if (!this.tableFor || this.tableBuilt === this.tableFor) return;
    this.tableBuilt = this.tableFor;
    this._table(this.tableFor.values, this.tableFor.tokens);
    if (this.query !== null)
      this.table.table.tBodies[0]?.rows[this.query]?.setAttribute("aria-current", "true");
  }

  _table(values, tokens) {
    const causal = this.cache.asset.model.causal;
    this.table.fill({
      columns: ["Query", "Top keys (weight)"],
      rows: values.map((row, q) => {
        const order = Array.from(row.keys())
          .filter((k) => !(causal && k > q))
          .sort((a, b) => row[b] - row[a])
          .slice(0, 3);
        return [
          `${tokens[q]} (${q})`,
          order.map((k) => `${tokens[k]} (${k}) ${row[k].toFixed(3)}`).join("; "),
        ];
      }),
    });
  }

  /** Stop the heatmap's palette observer and the token lines' resize observer. */
  destroy() {
    this.heatmap.destroy();
    this.lines.destroy();
  }
}

// The model view: every layer and head of one asset as a thumbnail, with a statistic
// under each (the most extreme marked), in layer order or ranked; arrow keys move
// between heads, Enter opens one.
import { color } from "../../vendor/d3/d3.min.js";
import { colour } from "../renderers/heatmap.js";
import { afterFrame, el, nextTask } from "../ui/dom.js";
import { fmt, headList, kvGroup, modelLabel, STATS, select, statUnavailable } from "./parts.js";

// Thumbnails are drawn in slices of about SLICE_MS, yielding to the browser between
// slices: 72 heads of 128 tokens (the reader's own sentence) or SmolLM2's 270 heads drawn
// at once blocked the page for 230-690 ms at 4x CPU throttling (issue 24: no main-thread
// task over 100 ms). The first slice is drawn at once, the rest as the page stays free.
const SLICE_MS = 8;

// {href, layer, head}: the head to focus in a grid redrawn after Back (instant navigation
// may draw a new map for the same address; it takes the focus over from the old one).
let refocus = null;

/** After Back from head (layer, head): a grid drawn next for this address focuses it. */
export function rememberFocus(layer, head) {
  refocus = { href: location.href, layer, head };
}

// --- Colours of the thumbnails: the heatmap's viridis ramp as RGB bytes. -----------
let lut = null;
function rgbRamp() {
  if (!lut) {
    lut = new Uint8ClampedArray(256 * 3);
    for (let i = 0; i < 256; i++) {
      const c = color(colour(i / 255)).rgb();
      lut.set([c.r, c.g, c.b], i * 3);
    }
  }
  return lut;
}

/** Draw one head's weights (n x n, [query, key]) as n x n pixels; CSS scales them up. */
function drawThumbnail(canvas, w, n, vmax, causal) {
  if (canvas.width !== n) canvas.width = n;
  if (canvas.height !== n) canvas.height = n;
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

export class HeadGrid {
  /**
   * @param {AttentionMap} map the owner: its id, state, cache, timings, explorer flag,
   *   main panel and setState(changes) are used
   */
  constructor(map) {
    this.map = map;
    const id = (name) => `${map.id}-${name}`;
    this.root = el("div", "attn-map__model");
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
      map.setState({ stat: this.statSel.select.value }),
    );
    this.orderSel.select.addEventListener("change", () =>
      map.setState({ order: this.orderSel.select.value }),
    );
    gridTop.append(this.statSel.wrap, this.orderSel.wrap);
    // What the statistic measures here, or why it is not measured (said when it changes).
    this.statHelp = el("p", "attn-map__help");
    this.statHelp.id = id("stat-help");
    this.statHelp.setAttribute("aria-live", "polite");
    this.statSel.select.setAttribute("aria-describedby", this.statHelp.id);
    this.gridCaption = el("p", "attn-map__title");
    this.gridCaption.id = id("grid-caption");
    this.grid = el("div", "attn-map__grid");
    this.grid.setAttribute("role", "group");
    this.grid.setAttribute("aria-labelledby", this.gridCaption.id);
    this.grid.addEventListener("keydown", (e) => this._onKey(e));
    // Where the weights came from (e.g. SmolLM2's are dequantised from a 4-bit GGUF) and GQA.
    this.modelNote = el("p", "attn-map__help attn-map__model-note");
    this.root.append(this.gridCaption, this.modelNote, gridTop, this.statHelp, this.grid);
    // Drawn thumbnails ("layer:head" -> canvas) of one head cache and colour scale: a grid
    // redrawn for the same ones (Back from a head, another statistic or order) moves them.
    this.drawn = new Map();
    this.drawnFor = null;
    this.drawToken = 0;
  }

  /** Focus the grid's current head (the one with tabindex 0). */
  focusCurrent() {
    this.grid.querySelector('[tabindex="0"]')?.focus();
  }

  /** Draw every head of the map's current asset as a thumbnail with its statistic; the
   * thumbnails not drawn yet are drawn in slices (_drawThumbs: the grid's data-drawn is
   * "true" when all are). */
  render() {
    const map = this.map;
    const t0 = performance.now();
    const scale = map.state.exclude_first;
    // The grid drawn last time, asked for again (Back from a head): only the tab stop moves.
    const built = `${map.state.stat}|${map.state.order}|${scale}`;
    if (this.builtFor?.cache === map.cache && this.builtFor.key === built) {
      for (const b of this.grid.children)
        b.tabIndex =
          Number(b.dataset.layer) === map.state.layer && Number(b.dataset.head) === map.state.head
            ? 0
            : -1;
      return;
    }
    this.builtFor = { cache: map.cache, key: built };
    const token = ++this.drawToken; // a later render stops this one's slices
    if (this.drawnFor?.cache !== map.cache || this.drawnFor.scale !== scale) {
      this.drawn = new Map();
      this.drawnFor = { cache: map.cache, scale };
    }
    const todo = []; // [canvas, layer, head] still to draw
    const s = map.state;
    const asset = map.cache.asset;
    const { n_layers, n_heads } = asset.model;
    const n = asset.seq_len;
    const stat = STATS[s.stat];
    const missing = statUnavailable(asset, s.stat);
    const values = missing ? null : asset.head_stats[s.stat];
    this.statSel.select.value = s.stat;
    this.orderSel.select.value = s.order;
    this.statHelp.textContent = missing
      ? `${stat.label}: ${missing}.`
      : `${stat.label}: ${stat.help(asset)}. Shown under each head; ${stat.high ? "highest" : "lowest"} marked ★.`;
    this.statHelp.classList.toggle("attn-map__help--missing", Boolean(missing));
    this.gridCaption.textContent = `Every head of ${modelLabel(asset.model)} on “${asset.sentence.id}”: ${n_layers} layers × ${n_heads} heads, layer after layer. Left and right arrows move between heads, up and down between layers; Enter opens a head.`;
    const kv = asset.model.n_kv_heads ?? n_heads;
    const gqa =
      kv < n_heads
        ? `Its ${n_heads} query heads share ${kv} key/value heads (grouped-query attention): “KV” under a head names the key/value head it reads, and a thick left edge starts each group. `
        : "";
    this.modelNote.textContent = `${gqa}Weights: ${asset.model.source}.`;
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
      let c = this.drawn.get(`${l}:${h}`);
      if (!c) {
        c = el("canvas");
        c.setAttribute("aria-hidden", "true");
        c.width = n; // its final size at once: the grid's layout does not move as it fills
        c.height = n;
        todo.push([c, l, h]);
      }
      const shown = values ? `${mark ? "★ " : ""}${fmt(value, 2)}` : "–";
      // With GQA, the key/value head each query head reads: "L0 H4 · KV1"; the first head of
      // each group starts with a thicker edge (in layer order) so the groups show.
      const group = kvGroup(asset.model, h);
      const name = `L${l} H${h}${group ? ` · KV${group.kv}` : ""}`;
      if (group) {
        b.dataset.kv = String(group.kv);
        if (s.order !== "ranked" && group.members[0] === h)
          b.classList.add("attn-map__thumb--kv-first");
      }
      b.append(
        c,
        el("span", "attn-map__thumb-label", name),
        " ",
        el("span", "attn-map__thumb-value", shown),
      );
      const shares = group
        ? `, key/value head ${group.kv}, shared with ${headList(group.members.filter((m) => m !== h))}`
        : "";
      // The name starts with the visible text (WCAG 2.5.3), then says it in words.
      b.setAttribute(
        "aria-label",
        `${name}${values ? ` ${shown}` : ""}: layer ${l}, head ${h}${shares}, ${stat.label.toLowerCase()} ` +
          `${values ? fmt(value) : "not measured"}${mark ? ", the most extreme" : ""}`,
      );
      b.tabIndex = l === s.layer && h === s.head ? 0 : -1;
      b.addEventListener("click", () => {
        map.setState({ view: "head", layer: l, head: h, query: null });
        // Keep the reader's place: focus moves to the head that opened, once the page has
        // drawn it (focusing at once forced the new view's styles and layout into this
        // task: 50-200 ms at 4x CPU throttling).
        afterFrame().then(() => {
          if (map.state.view === "head") map.main.heatmap.canvas.focus();
        });
      });
      b.addEventListener("focus", () => {
        this.focusIndex = i;
      });
      return b;
    });
    this.grid.style.setProperty("--attn-heads", String(n_heads));
    this.grid.classList.toggle("attn-map__grid--ranked", s.order === "ranked");
    this.grid.replaceChildren(...cells);
    if (refocus && map.explorer && !map.timings.firstGrid && refocus.href === location.href) {
      const b = this.grid.querySelector(
        `[data-layer="${refocus.layer}"][data-head="${refocus.head}"]`,
      );
      refocus = null;
      b?.focus();
    }
    this._drawThumbs(todo, token, t0);
  }

  /** Draw `todo` ([canvas, layer, head]) a slice at a time; stops when a later render or
   * another asset takes over. The first slice is drawn before this returns. */
  async _drawThumbs(todo, token, t0) {
    const map = this.map;
    const cache = map.cache;
    const exclude = map.state.exclude_first;
    const vmaxOf = (entry) => cache.vmax(entry, exclude);
    this.grid.dataset.drawn = "false";
    let i = 0;
    while (i < todo.length) {
      const start = performance.now();
      do {
        const [c, l, h] = todo[i++];
        const entry = cache.get(l, h); // decoded on first use
        drawThumbnail(c, entry.w, cache.n, vmaxOf(entry), cache.causal);
        this.drawn.set(`${l}:${h}`, c);
      } while (i < todo.length && performance.now() - start < SLICE_MS);
      if (i < todo.length) await nextTask();
      if (token !== this.drawToken || map.cache !== cache || !this.grid.isConnected) return;
    }
    this.grid.dataset.drawn = "true";
    map.timings.grid = performance.now() - t0;
    if (!map.timings.firstGrid) {
      map.timings.firstGrid = performance.now() - map.timings.started;
      performance.mark("explorer:grid");
    }
  }

  _onKey(event) {
    const buttons = [...this.grid.querySelectorAll("button")];
    const i = buttons.indexOf(document.activeElement);
    if (i < 0) return;
    const cols = this.map.cache.asset.model.n_heads;
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
}

// A [query, key] heatmap on a canvas: token labels on both axes, a note per row, one
// selected cell (click, or arrow keys when focused), colours from d3-scale-chromatic.
//
// Tokens are drawn as canvas text, never inserted as HTML. The canvas is one tab stop;
// the selected cell is described in a live region beside it, and callers should add a
// text alternative (the pattern widget adds a table).
import { interpolateViridis } from "../../vendor/d3/d3.min.js";

const MIN_CELL = 6;
const MAX_CELL = 44;
const MAX_LABEL = 12; // characters of a token drawn as an axis label
const PAD = 6; // room inside the canvas for the focus ring, so it never covers a cell
// Viridis is dark below ~0.42 and light above: text colour with >= 4.5:1 contrast.
const LIGHT_FROM = 0.42;
// Viridis (colour-blind safe, perceptually uniform) from d3-scale-chromatic, sampled
// once at 256 steps: a cell's colour is then a lookup, not a string interpolation.
let ramp = null;
function viridisRamp() {
  if (!ramp) ramp = Array.from({ length: 256 }, (_, i) => interpolateViridis(i / 255));
  return ramp;
}
/** The viridis colour (a CSS colour string) of `t` in [0, 1] (clamped). */
export function colour(t) {
  return viridisRamp()[Math.round(Math.max(0, Math.min(1, t)) * 255)];
}

let rampBytes = null; // the ramp as [r, g, b, 255], for the cells' image
const TRANSPARENT = [0, 0, 0, 0]; // a value that is not a number: no colour, as before

/** [r, g, b, a] bytes of CSS colour `css`, as `ctx` reads it (a = alpha × 255). */
function rgba(ctx, css) {
  ctx.fillStyle = "#000";
  ctx.fillStyle = css;
  const s = ctx.fillStyle; // "#rrggbb", or "rgba(r, g, b, a)" when not opaque
  if (s.startsWith("#")) return [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16)).concat(255);
  const [r, g, b, a = 1] = s.match(/[\d.]+/g).map(Number);
  return [r, g, b, Math.round(a * 255)];
}

/** The page palette's colours and text font, as the heatmap draws with them. */
function readPalette() {
  const style = getComputedStyle(document.body);
  const prop = (name) => style.getPropertyValue(name).trim();
  return {
    fg: prop("--md-default-fg-color") || "#222",
    muted: prop("--md-default-fg-color--light") || "#777",
    bg: prop("--md-default-bg-color") || "#fff",
    family: `${style.getPropertyValue("--md-text-font-family") || "sans-serif"}, sans-serif`,
  };
}

export class Heatmap {
  /**
   * @param {HTMLElement} container
   * @param {{label: string, onSelect?: (q: number, k: number) => void,
   *          onHover?: (q: number, k: number) => void}} options
   *   onHover gets the cell under the pointer, or (-1, -1) when it leaves the cells.
   */
  constructor(container, options) {
    this.options = options;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "attn-heatmap";
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", options.label);
    this.wrap = document.createElement("div");
    this.wrap.className = "attn-heatmap__scroll";
    this.wrap.append(this.canvas);
    container.append(this.wrap, this._colourBar());
    this.data = null;
    this.selected = null;
    this.canvas.addEventListener("click", (e) => this._onClick(e));
    this.canvas.addEventListener("keydown", (e) => this._onKey(e));
    if (options.onHover) {
      this.canvas.addEventListener("mousemove", (e) => {
        const cell = this.cellAt(e.clientX, e.clientY);
        options.onHover(...(cell || [-1, -1]));
      });
      this.canvas.addEventListener("mouseleave", () => options.onHover(-1, -1));
    }
    // Redraw when the reader switches between the light and dark palette.
    this.paletteObserver = new MutationObserver(() => {
      this.palette = null;
      this.draw();
    });
    // The palette's colours and font, read once (getComputedStyle forces a style update
    // when the page has changed since the last frame), and the room the canvas has, kept
    // by a ResizeObserver (reading clientWidth in draw forced a layout in every update).
    this.palette = null;
    this.room = null;
    this.resizeObserver = new ResizeObserver(() => {
      const width = this.wrap.clientWidth;
      if (width === this.room) return;
      this.room = width;
      if (this.data) this.draw();
    });
    this.resizeObserver.observe(this.wrap);
    this.paletteObserver.observe(document.body, {
      attributes: true,
      attributeFilter: ["data-md-color-scheme"],
    });
  }

  /** A legend: the colour map from weight 0 to vmax (decorative; values are in text). */
  _colourBar() {
    const bar = document.createElement("div");
    bar.className = "attn-heatmap__legend";
    bar.setAttribute("aria-hidden", "true");
    const stops = Array.from({ length: 11 }, (_, i) => colour(i / 10));
    const ramp = document.createElement("span");
    ramp.className = "attn-heatmap__ramp";
    ramp.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
    const lo = document.createElement("span");
    lo.textContent = "weight 0";
    this.legendLow = lo;
    this.legendHigh = document.createElement("span");
    this.legendHigh.textContent = "1";
    bar.append(lo, ramp, this.legendHigh);
    return bar;
  }

  /**
   * @param {{rowLabels: string[], colLabels: string[], values: ArrayLike<number>[],
   *          masked?: boolean[][], rowNotes?: string[], vmax?: number, vmin?: number,
   *          legend?: [string, string]}} data values in [0, 1]; the colour scale runs
   *   from vmin (default 0) to vmax (default 1), values beyond saturate; legend replaces
   *   the colour bar's two end labels (e.g. signed values: vmin -1, ["−1", "+1"]).
   */
  setData(data) {
    // Long tokens are shortened on the canvas only; the text around it has them whole.
    const short = (t) => (t.length > MAX_LABEL ? `${t.slice(0, MAX_LABEL - 1)}…` : t);
    data = {
      ...data,
      rowLabels: data.rowLabels.map(short),
      colLabels: data.colLabels.map(short),
    };
    this.data = data;
    this.vmin = Number.isFinite(data.vmin) ? data.vmin : 0;
    this.vmax = data.vmax > this.vmin ? data.vmax : Math.max(1, this.vmin + 1);
    this.legendHigh.textContent = data.legend
      ? data.legend[1]
      : this.vmax < 1
        ? `${this.vmax.toFixed(3)} and above`
        : String(this.vmax);
    this.legendLow.textContent = data.legend ? data.legend[0] : "weight 0";
    const n = data.rowLabels.length;
    const m = data.colLabels.length;
    if (!this.selected || this.selected[0] >= n || this.selected[1] >= m) this.selected = null;
    this.draw();
  }

  /** Blank the picture until the next setData; its size stays, so nothing on the page
   * moves (a caller drawing after the next frame). */
  clear() {
    this.data = null;
    const ctx = this.canvas.getContext("2d");
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.restore();
  }

  /** Stop watching the palette and the size (the canvas's own listeners go with it). */
  destroy() {
    this.paletteObserver.disconnect();
    this.resizeObserver.disconnect();
  }

  select(q, k) {
    if (!this.data) return;
    const n = this.data.rowLabels.length;
    const m = this.data.colLabels.length;
    this.selected = [Math.max(0, Math.min(n - 1, q)), Math.max(0, Math.min(m - 1, k))];
    this.draw();
    if (this.options.onSelect) this.options.onSelect(this.selected[0], this.selected[1]);
  }

  _layout(ctx) {
    const { rowLabels, colLabels, rowNotes } = this.data;
    ctx.font = this.font;
    const width = (s) => ctx.measureText(s).width;
    const labelW = PAD + Math.ceil(Math.max(...rowLabels.map(width))) + 10;
    const labelH = PAD + Math.ceil(Math.max(...colLabels.map(width))) + 10;
    this.room ??= this.wrap.clientWidth; // once; then the ResizeObserver keeps it
    const room = (this.room || 600) - labelW - PAD - 4;
    let noteW = rowNotes ? Math.ceil(Math.max(...rowNotes.map(width))) + 14 : 0;
    // On a narrow screen the cells matter more than the notes (the table has them too).
    if (noteW && (room - noteW) / colLabels.length < 24) noteW = 0;
    const avail = Math.max(160, room - noteW);
    const cell = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(avail / colLabels.length)));
    return { labelW, labelH, noteW, cell };
  }

  draw() {
    if (!this.data) return;
    this.palette ??= readPalette();
    const { fg, muted, bg, family } = this.palette;
    this.font = `13px ${family}`;
    const bold = `bold 13px ${family}`; // the selected query and key: weight, not colour
    const ctx = this.canvas.getContext("2d");
    this.layout = this._layout(ctx);
    const L = this.layout;
    const { rowLabels, colLabels, values, masked, rowNotes } = this.data;
    const n = rowLabels.length;
    const m = colLabels.length;
    const cssW = L.labelW + m * L.cell + L.noteW + PAD;
    const cssH = L.labelH + n * L.cell + PAD;
    const dpr = window.devicePixelRatio || 1;
    // A canvas given its size again is reallocated and the page laid out: only on a change.
    const size = `${cssW} ${cssH} ${dpr}`;
    if (size !== this.drawnSize) {
      this.drawnSize = size;
      this.canvas.width = Math.round(cssW * dpr);
      this.canvas.height = Math.round(cssH * dpr);
      this.canvas.style.width = `${cssW}px`;
      this.canvas.style.height = `${cssH}px`;
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);
    ctx.font = this.font;
    ctx.textBaseline = "middle";
    const sel = this.selected;

    // Column labels (keys), rotated to read bottom-up.
    ctx.textAlign = "left";
    for (let k = 0; k < m; k++) {
      ctx.save();
      ctx.translate(L.labelW + (k + 0.5) * L.cell, L.labelH - 6);
      ctx.rotate(-Math.PI / 2);
      ctx.fillStyle = fg;
      ctx.font = sel && sel[1] === k ? bold : this.font;
      if (L.cell >= 10 || k % Math.ceil(10 / L.cell) === 0) ctx.fillText(colLabels[k], 0, 0);
      ctx.restore();
    }
    // The cells: one pixel each in an image, scaled up without smoothing (one drawImage, not
    // n x m fillRects: 128 tokens took 190 ms at 4x CPU throttling). A masked cell is the
    // muted colour at 18% of its opacity, as a translucent fill over the page.
    const cells = new ImageData(m, n);
    const px = cells.data;
    rampBytes ??= viridisRamp().map((c) => rgba(ctx, c));
    const ramp = rampBytes;
    const [mr, mg, mb, ma] = rgba(ctx, muted);
    for (let q = 0; q < n; q++) {
      for (let k = 0; k < m; k++) {
        const i = 4 * (q * m + k);
        if (masked?.[q][k]) {
          px.set([mr, mg, mb, Math.round(ma * 0.18)], i);
          continue;
        }
        const t = (values[q][k] - this.vmin) / (this.vmax - this.vmin);
        const c = ramp[Math.round(Math.max(0, Math.min(1, t)) * 255)] ?? TRANSPARENT;
        px[i] = c[0];
        px[i + 1] = c[1];
        px[i + 2] = c[2];
        px[i + 3] = 255;
      }
    }
    // One small canvas per heatmap holds those pixels, kept between draws: a new canvas
    // and 2D context on every draw cost more than the drawing (eight heatmaps a change).
    this.image ??= document.createElement("canvas");
    const image = this.image;
    if (image.width !== m) image.width = m;
    if (image.height !== n) image.height = n;
    this.imageCtx = this.imageCtx || image.getContext("2d");
    this.imageCtx.putImageData(cells, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(image, L.labelW, L.labelH, m * L.cell, n * L.cell);
    // Row labels (queries) and the numbers in the cells when they are large enough.
    const showNumbers = L.cell >= 36;
    for (let q = 0; q < n; q++) {
      const y = L.labelH + q * L.cell;
      ctx.textAlign = "right";
      ctx.fillStyle = fg;
      ctx.font = sel && sel[0] === q ? bold : this.font;
      if (L.cell >= 10 || q % Math.ceil(10 / L.cell) === 0)
        ctx.fillText(rowLabels[q], L.labelW - 6, y + L.cell / 2);
      ctx.font = this.font;
      for (let k = 0; k < m; k++) {
        const x = L.labelW + k * L.cell;
        if (masked?.[q][k]) continue;
        const v = values[q][k];
        const t = (v - this.vmin) / (this.vmax - this.vmin);
        if (showNumbers) {
          ctx.textAlign = "center";
          ctx.fillStyle = t >= LIGHT_FROM ? "#000" : "#fff";
          ctx.fillText(v.toFixed(2), x + L.cell / 2, y + L.cell / 2);
        }
      }
      if (L.noteW && L.cell >= 10) {
        ctx.textAlign = "left";
        ctx.fillStyle = fg;
        ctx.fillText(rowNotes[q], L.labelW + m * L.cell + 8, y + L.cell / 2);
      }
    }
    if (sel) {
      // A ring in the page's text colour just outside the cell, and one in the page's
      // background just inside: the pair contrasts with the page, with any viridis colour
      // and with the neighbours, in both palettes.
      const x = L.labelW + sel[1] * L.cell;
      const y = L.labelH + sel[0] * L.cell;
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = fg;
      ctx.strokeRect(x - 1.25, y - 1.25, L.cell + 2.5, L.cell + 2.5);
      if (L.cell >= 6) {
        ctx.lineWidth = 1.5;
        ctx.strokeStyle = bg;
        ctx.strokeRect(x + 0.75, y + 0.75, L.cell - 1.5, L.cell - 1.5);
      }
    }
  }

  /** The [query, key] cell under viewport point (x, y), or null. */
  cellAt(clientX, clientY) {
    if (!this.layout || !this.data) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = clientX - rect.left - this.layout.labelW;
    const y = clientY - rect.top - this.layout.labelH;
    if (x < 0 || y < 0) return null;
    const k = Math.floor(x / this.layout.cell);
    const q = Math.floor(y / this.layout.cell);
    if (q >= this.data.rowLabels.length || k >= this.data.colLabels.length) return null;
    return [q, k];
  }

  /** The centre of cell (q, k) in canvas CSS pixels (for tests and benchmarks). */
  cellCentre(q, k) {
    const L = this.layout;
    return { x: L.labelW + (k + 0.5) * L.cell, y: L.labelH + (q + 0.5) * L.cell };
  }

  _onClick(event) {
    const cell = this.cellAt(event.clientX, event.clientY);
    if (cell) this.select(...cell);
  }

  _onKey(event) {
    if (!this.data) return;
    const moves = {
      ArrowUp: [-1, 0],
      ArrowDown: [1, 0],
      ArrowLeft: [0, -1],
      ArrowRight: [0, 1],
      Home: [0, -1e9],
      End: [0, 1e9],
    };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    if (!this.selected) return this.select(0, 0);
    const [q, k] = this.selected;
    this.select(q + move[0], k + move[1]);
  }
}

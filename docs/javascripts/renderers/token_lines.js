// The two-column token view of one query's attention: query tokens on the left, keys on
// the right, a line from the selected query to every key whose width and opacity follow
// the weight. Tokens are buttons and spans with textContent (never HTML); the lines are
// an SVG drawn over the gap between the columns and hidden from screen readers (the
// caller provides the numbers as text).
import { afterFrame, el } from "../ui/dom.js";

const SVG = "http://www.w3.org/2000/svg";
const MAX_WIDTH = 7; // px of a line at the top of the colour scale

export class TokenLines {
  /**
   * @param {HTMLElement} container
   * @param {{label: string, onQuery: (q: number) => void}} options
   */
  constructor(container, options) {
    this.options = options;
    this.root = el("div", "attn-lines");
    this.left = el("div", "attn-lines__col attn-lines__col--query");
    this.left.setAttribute("role", "group");
    this.left.setAttribute("aria-label", options.label);
    this.svg = document.createElementNS(SVG, "svg");
    this.svg.setAttribute("class", "attn-lines__svg");
    this.svg.setAttribute("aria-hidden", "true");
    this.right = el("div", "attn-lines__col attn-lines__col--key");
    this.right.setAttribute("aria-hidden", "true"); // the keys are read from the table
    this.root.append(this.left, this.svg, this.right);
    container.append(this.root);
    this.tokens = null;
    // The columns change height with the font and width: redraw the lines then. Only
    // the width and the query column decide the drawing, so nothing here feeds back.
    this.size = "";
    this.resize = new ResizeObserver(() => {
      const size = `${this.svg.clientWidth}x${this.left.offsetHeight}`;
      if (size !== this.size) this._drawLines();
    });
    this.resize.observe(this.root);
  }

  /**
   * @param {string[]} tokens display text of every position
   * @param {(q: number) => ArrayLike<number>} row the weights of query q over all keys
   * @param {number} query the selected query
   * @param {number} vmax weight drawn at full width and opacity (larger ones saturate)
   * @param {boolean[]|null} visible per key for the selected query (null: all)
   */
  setData(tokens, row, query, vmax, visible) {
    const rebuilt = this.tokens !== tokens;
    if (rebuilt) {
      this.tokens = tokens;
      this.left.replaceChildren(
        ...tokens.map((t, q) => {
          const b = el("button", "attn-lines__token", t);
          b.type = "button";
          b.dataset.q = String(q);
          b.setAttribute("aria-label", `Query ${q}: ${t}`);
          b.addEventListener("click", () => this.options.onQuery(q));
          b.addEventListener("keydown", (e) => this._onKey(e, q));
          return b;
        }),
      );
      this.right.replaceChildren(...tokens.map((t) => el("span", "attn-lines__token", t)));
    }
    this.row = row;
    this.query = query;
    this.vmax = vmax > 0 ? vmax : 1;
    this.visible = visible;
    this.left.querySelectorAll("button").forEach((b, q) => {
      b.setAttribute("aria-pressed", String(q === query));
      b.tabIndex = q === query ? 0 : -1;
    });
    if (!rebuilt) return this._drawLines();
    // New columns: their lines are drawn once the page has laid them out, since reading
    // the tokens' places now would force that layout into this task (issue 24: at 128
    // tokens, 50-100 ms at 4x CPU throttling). The old lines go at once.
    this.svg.replaceChildren();
    const pending = {};
    this.pending = pending;
    afterFrame().then(() => {
      if (this.pending === pending) this._drawLines();
    });
  }

  _onKey(event, q) {
    const step = { ArrowUp: -1, ArrowDown: 1, Home: -1e9, End: 1e9 }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    const next = Math.max(0, Math.min(this.tokens.length - 1, q + step));
    this.options.onQuery(next);
    this.left.children[next]?.focus();
  }

  _drawLines() {
    this.pending = null;
    if (!this.tokens || this.query === null) return;
    const top = this.root.getBoundingClientRect().top;
    const centre = (node) => {
      const r = node.getBoundingClientRect();
      return r.top - top + r.height / 2;
    };
    const width = this.svg.clientWidth || 80;
    const height = this.left.offsetHeight; // the query column sets the height
    this.size = `${this.svg.clientWidth}x${height}`;
    this.svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    this.svg.setAttribute("height", String(height));
    const y0 = centre(this.left.children[this.query]);
    const weights = this.row(this.query);
    const lines = [];
    for (let k = 0; k < this.tokens.length; k++) {
      if (this.visible && !this.visible[k]) continue;
      const t = Math.min(1, weights[k] / this.vmax);
      if (t < 0.01) continue; // invisible anyway; keeps the SVG small
      const line = document.createElementNS(SVG, "line");
      line.setAttribute("x1", "2");
      line.setAttribute("y1", String(y0));
      line.setAttribute("x2", String(width - 2));
      line.setAttribute("y2", String(centre(this.right.children[k])));
      line.setAttribute("stroke-width", String(0.5 + MAX_WIDTH * t));
      line.setAttribute("stroke-opacity", String(0.15 + 0.85 * t));
      lines.push(line);
    }
    this.svg.replaceChildren(...lines);
    [...this.right.children].forEach((s, k) => {
      const t = weights[k] / this.vmax;
      s.classList.toggle("attn-lines__token--strong", t >= 0.5);
    });
  }

  /** Stop watching the size (the buttons' listeners go with the elements). */
  destroy() {
    this.resize.disconnect();
  }
}

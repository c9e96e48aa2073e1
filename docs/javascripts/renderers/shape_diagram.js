// A shape diagram: the steps of a computation as a list of boxes joined by labelled arrows,
// each box naming an array and its shape, e.g. "X (8 × 16) → × W_Q (16 × 4) → Q (8 × 4)".
//
//   const diagram = shapeDiagram(container, {label});
//   diagram.update(steps)   steps: [{from?: "X", op: "× W_Q (16 × 4)", name: "Q", shape: [8, 4]}]
//   diagram.destroy()
//
// Plain HTML text (an ordered list), so a screen reader reads it as it is; the boxes wrap
// onto new lines on a narrow screen instead of scrolling sideways.

const STYLE_ID = "attn-shape-diagram-style";
const CSS = `
ol.attn-shapes, .md-typeset ol.attn-shapes { list-style: none; margin: 0.6rem 0; padding: 0; display: flex; flex-wrap: wrap;
  gap: 0.35rem 0.2rem; align-items: center; font-size: 0.7rem; }
.attn-shapes li, .md-typeset .attn-shapes li { display: flex; flex-wrap: wrap; align-items: center; gap: 0.2rem; margin: 0; }
.attn-shapes__box { border: 1px solid var(--md-default-fg-color--light); border-radius: 0.2rem;
  padding: 0.1rem 0.35rem; background: var(--md-code-bg-color); color: var(--md-default-fg-color); }
.attn-shapes__shape { font-family: var(--md-code-font-family, monospace); white-space: nowrap; }
.attn-shapes__op { color: var(--md-default-fg-color); white-space: nowrap; }
`;

function ensureStyle() {
  if (document.getElementById(STYLE_ID)) return;
  const style = document.createElement("style");
  style.id = STYLE_ID;
  style.textContent = CSS;
  document.head.append(style);
}

/** "(8 × 16)" for [8, 16]. */
export function shapeText(shape) {
  return `(${Array.from(shape).join(" × ")})`;
}

export function shapeDiagram(container, { label }) {
  ensureStyle();
  const figure = document.createElement("figure");
  figure.className = "attn-shapes-figure";
  figure.style.margin = "0.6rem 0";
  const caption = document.createElement("figcaption");
  caption.textContent = label;
  caption.style.fontSize = "0.7rem";
  const list = document.createElement("ol");
  list.className = "attn-shapes";
  list.setAttribute("aria-label", label);
  figure.append(caption, list);
  container.append(figure);

  function box(name, shape) {
    const span = document.createElement("span");
    span.className = "attn-shapes__box";
    const strong = document.createElement("strong");
    strong.textContent = name;
    const dims = document.createElement("span");
    dims.className = "attn-shapes__shape";
    dims.textContent = ` ${shapeText(shape)}`;
    span.append(strong, dims);
    return span;
  }

  let drawn = null; // the steps drawn, as JSON: a new seed keeps every shape

  function update(steps) {
    const key = JSON.stringify(steps);
    if (key === drawn) return;
    drawn = key;
    const items = steps.map((step, i) => {
      const li = document.createElement("li");
      if (i > 0 || step.op) {
        const op = document.createElement("span");
        op.className = "attn-shapes__op";
        const from = step.from ? `${step.from} ` : "";
        op.textContent = step.op ? `→ ${from}${step.op} →` : "→";
        li.append(op);
      }
      li.append(box(step.name, step.shape));
      return li;
    });
    list.replaceChildren(...items);
  }

  return { update, element: figure, destroy: () => figure.remove() };
}

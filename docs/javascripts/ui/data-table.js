// The site's data tables, visible (a widget's numbers, a heatmap's text alternative) or
// visually hidden (a chart's text alternative): every one has a caption (the label,
// visually hidden, when none is shown), column headers (th scope="col") and rows whose
// first cell is their header (th scope="row"). Cells are text, never HTML, or a node the
// caller made. A visible table sits in a scroll region that takes keyboard focus and has
// a name: on a phone it scrolls sideways, and a keyboard must reach what is off screen.
//
//   const t = dataTable({ label: "Each query's top key" });   // place t.root
//   const trs = t.fill({ caption, columns, rows });           // the body's <tr>, in order
import { el } from "./dom.js";

/**
 * @param {{label: string, className?: string, hidden?: boolean, rowHeaders?: boolean}} options
 *   label: the region's name, and the caption when fill gives none; className: the
 *   table's classes (a class keeps Material's own table styles and scroll box off);
 *   hidden: in a visually hidden box, not a scroll region; rowHeaders: false when the
 *   first column is no row's name.
 * @returns {{root: HTMLElement, table: HTMLTableElement,
 *   fill(data: {caption?: string, columns?: (string|{text: string, title?: string})[],
 *   rows: (string|number|Node)[][]}): HTMLTableRowElement[]}}
 */
export function dataTable({
  label,
  className = "attn-lab__rows",
  hidden = false,
  rowHeaders = true,
}) {
  const root = el("div", hidden ? "attn-visually-hidden" : "attn-lab__table-scroll");
  if (!hidden) {
    root.tabIndex = 0;
    root.setAttribute("role", "region");
    root.setAttribute("aria-label", label);
  }
  const table = el("table", className);
  root.append(table);

  function cell(content, header) {
    const node = el(header ? "th" : "td");
    if (header) node.scope = "row";
    if (content instanceof Node) node.append(content);
    else node.textContent = String(content);
    return node;
  }

  function fill({ caption, columns, rows }) {
    const parts = [el("caption", caption ? null : "attn-visually-hidden", caption || label)];
    if (columns) {
      const tr = el("tr");
      for (const column of columns) {
        const th = el("th", null, typeof column === "string" ? column : column.text);
        th.scope = "col";
        if (column.title) th.title = column.title;
        tr.append(th);
      }
      const thead = el("thead");
      thead.append(tr);
      parts.push(thead);
    }
    const trs = rows.map((row) => {
      const tr = el("tr");
      row.forEach((content, i) => {
        tr.append(cell(content, rowHeaders && i === 0));
      });
      return tr;
    });
    const tbody = el("tbody");
    tbody.append(...trs);
    table.replaceChildren(...parts, tbody);
    return trs;
  }

  return { root, table, fill };
}

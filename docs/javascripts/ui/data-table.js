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

  /** Put `content` (text, or a node the caller made) in `node`, unless it is there. */
  function put(node, content) {
    if (content instanceof Node) {
      if (node.childNodes.length !== 1 || node.firstChild !== content)
        node.replaceChildren(content);
    } else {
      const text = String(content);
      // A cell's one text node gets its new data in place: cheaper than textContent, which
      // replaces the node (and a new number in every cell is the common update).
      if (node.firstChild?.nodeType === Node.TEXT_NODE && node.childNodes.length === 1) {
        if (node.firstChild.data !== text) node.firstChild.data = text;
      } else node.textContent = text;
    }
  }

  function cell(content, header) {
    const node = el(header ? "th" : "td");
    if (header) node.scope = "row";
    put(node, content);
    return node;
  }

  /** A row's cells made to match `row` (reusing those of the same kind). */
  function fillRow(tr, row) {
    const cells = tr.children;
    row.forEach((content, i) => {
      const header = rowHeaders && i === 0;
      const node = cells[i];
      if (!node || node.localName !== (header ? "th" : "td")) {
        const made = cell(content, header);
        if (node) node.replaceWith(made);
        else tr.append(made);
        return;
      }
      put(node, content);
    });
    while (cells.length > row.length) tr.lastElementChild.remove();
  }

  // The parts of the table as last filled: a new fill changes only what differs, so an
  // update of the numbers rewrites their text and makes no new elements (a table of
  // 1,000 cells rebuilt on every control change cost more than the drawing).
  let parts = null;
  let drawnColumns = null;

  function fill({ caption, columns, rows }) {
    if (!parts || parts.tbody.parentNode !== table) {
      drawnColumns = null;
      parts = { caption: el("caption"), thead: null, tbody: el("tbody") };
      table.replaceChildren(parts.caption, parts.tbody);
    }
    if (!caption) parts.caption.className = "attn-visually-hidden";
    else parts.caption.removeAttribute("class");
    put(parts.caption, caption || label);
    const columnsKey = columns ? JSON.stringify(columns) : null;
    if (columnsKey !== drawnColumns) {
      drawnColumns = columnsKey;
      parts.thead?.remove();
      parts.thead = null;
      if (columns) {
        const tr = el("tr");
        for (const column of columns) {
          const th = el("th", null, typeof column === "string" ? column : column.text);
          th.scope = "col";
          if (column.title) th.title = column.title;
          tr.append(th);
        }
        parts.thead = el("thead");
        parts.thead.append(tr);
        parts.caption.after(parts.thead);
      }
    }
    const body = parts.tbody;
    const trs = rows.map((row, i) => {
      let tr = body.children[i];
      if (!tr) {
        tr = el("tr");
        body.append(tr);
      } else {
        // as a new row: what a caller set on the old one (a class, a style) goes
        for (const { name } of [...tr.attributes]) tr.removeAttribute(name);
      }
      fillRow(tr, row);
      return tr;
    });
    while (body.children.length > rows.length) body.lastElementChild.remove();
    return trs;
  }

  return { root, table, fill };
}

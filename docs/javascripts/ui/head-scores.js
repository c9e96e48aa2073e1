// Parts shared by the induction-model labs (labs/induction_training.js,
// labs/induction_model.js): a picker of the model's four heads, and a table of every
// head's induction and previous-token scores with the chosen head marked.
//
//   headPicker(kit, lab)                 a <select> that sets {layer, head}
//   const t = scoresTable(body, caption); t.render(heads, {layer, head})
import { el } from "./dom.js";

const score = (x) => (x === null || x === undefined ? "no repeat" : Number(x).toFixed(2));

export function headPicker(kit, lab) {
  const select = kit.field("head", "Head", el("select"));
  const layers = kit.spec.layer.maximum + 1;
  const heads = kit.spec.head.maximum + 1;
  for (let l = 0; l < layers; l++)
    for (let h = 0; h < heads; h++) {
      const option = el("option", null, `layer ${l}, head ${h}`);
      option.value = `${l}:${h}`;
      select.append(option);
    }
  select.value = `${lab.params.layer}:${lab.params.head}`;
  select.title = "Which head to show (the model has 2 layers of 2 heads)";
  select.addEventListener("change", () => {
    const [layer, head] = select.value.split(":").map(Number);
    lab.update({ layer, head });
  });
  kit.inputs.layer = select; // an error about either parameter marks this control
  return select;
}

export function scoresTable(body, caption) {
  const scroller = el("div", "attn-lab__table-scroll");
  scroller.tabIndex = 0;
  scroller.setAttribute("role", "region");
  scroller.setAttribute("aria-label", caption);
  const table = el("table", "attn-lab__rows"); // a class: Material leaves it unwrapped
  scroller.append(table);
  body.append(scroller);
  function render(heads, chosen) {
    const head = el("tr");
    for (const h of ["Head", "Induction score", "Previous-token score"]) {
      const th = el("th", null, h);
      th.scope = "col";
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const tbody = el("tbody");
    for (const h of heads) {
      const tr = el("tr");
      const isChosen = h.layer === chosen.layer && h.head === chosen.head;
      const th = el("th", null, `layer ${h.layer}, head ${h.head}${isChosen ? " (shown)" : ""}`);
      th.scope = "row";
      tr.append(th, el("td", null, score(h.induction)), el("td", null, score(h.previous_token)));
      if (isChosen) tr.className = "attn-induction__chosen";
      tbody.append(tr);
    }
    table.replaceChildren(el("caption", null, caption), thead, tbody);
  }
  return { render };
}

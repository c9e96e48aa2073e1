// Parts shared by the induction-model labs (labs/induction_training.js,
// labs/induction_model.js): a picker of the model's four heads, and a table of every
// head's induction and previous-token scores with the chosen head marked.
//
//   headPicker(kit, lab)                 a <select> that sets {layer, head}
//   const t = scoresTable(body, caption); t.render(heads, {layer, head})
import { dataTable } from "./data-table.js";
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
  const table = dataTable({ label: caption });
  body.append(table.root);
  function render(heads, chosen) {
    const isChosen = (h) => h.layer === chosen.layer && h.head === chosen.head;
    const trs = table.fill({
      caption,
      columns: ["Head", "Induction score", "Previous-token score"],
      rows: heads.map((h) => [
        `layer ${h.layer}, head ${h.head}${isChosen(h) ? " (shown)" : ""}`,
        score(h.induction),
        score(h.previous_token),
      ]),
    });
    heads.forEach((h, i) => {
      if (isChosen(h)) trs[i].className = "attn-induction__chosen";
    });
  }
  return { render };
}

// Widget for the real_scores lab (labs_py/attention_labs/labs/real_scores.py): a trained
// head's scores on a real sentence. Pickers for the head (one of those the asset carries)
// and the query token; a line naming the model, the sentence and the head's range of
// scores; then ui/score-view.js, the same view as the random head of query_picker: the
// picked query's first components, its score with every key and that row as weights
// (bars), and the [query, key] score grid whose row headers pick a query. Found by
// labs/controller.js by name.
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { scoreView } from "../ui/score-view.js";

const f1 = (v) => Number(v).toFixed(1);

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const head = kit.field("pick", "Trained head", el("select"));
  head.addEventListener("change", () => lab.update({ pick: Number(head.value) }));
  const query = kit.field("query", "Query token", el("select"));
  query.addEventListener("change", () => lab.update({ query: Number(query.value) }));
  body.append(controls);

  const source = el("p", "attn-lab__shapes attn-real-scores__source");
  source.setAttribute("aria-live", "polite");
  body.append(source);
  const view = scoreView(body, lab);

  let drawn = "";

  function render(res) {
    const t = res.tokens;
    const key = JSON.stringify([t, res.labels]);
    if (key !== drawn) {
      head.replaceChildren(
        ...res.labels.map((label, i) => {
          const option = el("option", null, label);
          option.value = String(i);
          return option;
        }),
      );
      query.replaceChildren(
        ...t.map((token, i) => {
          const option = el("option", null, `${i}: ${token}`);
          option.value = String(i);
          return option;
        }),
      );
      drawn = key;
    }
    head.value = String(res.pick);
    query.value = String(res.query);
    const [lo, hi] = res.score_range;
    const model = res.model ? `${res.model}, ` : "";
    const sentence = res.sentence ? `sentence “${res.sentence}”` : "an example";
    source.textContent =
      `Trained weights (${model}${sentence}; ${res.labels[res.pick]}): its queries and keys ` +
      `as the model computed them, d_head = ${res.d_head}. Its scores run from ${f1(lo)} to ` +
      `${f1(hi)}; the weights divide them by √d_head = ${(1 / res.scale).toFixed(2)}` +
      `${res.causal ? " and hide later keys (a decoder)" : ""}.`;
    view.render(res, JSON.stringify([key, res.pick]));
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: view.destroy,
  };
}

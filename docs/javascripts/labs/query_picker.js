// Widget for the query_picker lab (labs_py/attention_labs/labs/query_picker.py): the
// sentence, a query picker, d_head and new random vectors; the shapes of X, W_Q, Q, K and
// S for these sizes; then ui/score-view.js: the picked query's first components, its score
// with every key and that row as weights (bars), and the whole [query, key] score grid as a
// table whose row headers pick a query, the picked row marked. Found by labs/controller.js.
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { scoreView } from "../ui/score-view.js";
import { tokenPicker, tokensField } from "../ui/sentence.js";

const shape = (s) => `(${s[0]}, ${s[1]})`;

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;

  const tokens = tokensField(kit, lab, (list) => ({
    tokens: list,
    query: Math.max(0, Math.min(lab.params.query, list.length - 1)),
  }));

  const query = field("query", "Query token", el("select"));
  query.addEventListener("change", () => lab.update({ query: Number(query.value) }));

  const dHead = field("d_head", "d_head", el("input"));
  Object.assign(dHead, {
    type: "number",
    min: spec.d_head.minimum,
    max: spec.d_head.maximum,
    step: 1,
    value: lab.params.d_head,
  });
  dHead.addEventListener("change", () => kit.numberChanged(dHead, "d_head"));

  const reseed = el("button", "md-button attn-lab__reseed", "New random vectors");
  reseed.type = "button";
  reseed.addEventListener("click", () =>
    lab.update({ seed: (lab.params.seed + 1) % spec.seed.maximum }),
  );
  controls.append(reseed);
  body.append(controls);

  const shapes = el("p", "attn-lab__shapes");
  shapes.setAttribute("aria-live", "polite");
  body.append(shapes);
  const view = scoreView(body, lab);

  const showQuery = tokenPicker(query);
  let drawnWords = null; // the field is written only for new tokens (not over a reader's typing)

  function render(res) {
    const t = res.tokens;
    const words = t.join(" ");
    if (words !== drawnWords) {
      tokens.value = words;
      drawnWords = words;
    }
    showQuery(t, res.query);
    if (dHead.value !== String(res.d_head)) dHead.value = res.d_head;

    const s = res.shapes;
    const line = `X ${shape(s.X)} → Q = X W_Q ${shape(s.Q)} and K = X W_K ${shape(s.K)}, with W_Q and W_K ${shape(s.W_Q)} → S = Q Kᵀ ${shape(s.S)}. Random W_Q, W_K and embeddings: nothing here is learned.`;
    if (shapes.textContent !== line) shapes.textContent = line;
    view.render(res, JSON.stringify([t, res.d_head, res.seed]));
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: view.destroy,
  };
}

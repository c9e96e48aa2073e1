// Widget for the query_picker lab (labs_py/attention_labs/labs/query_picker.py): the
// sentence, a query picker, d_head and new random vectors; the shapes of X, W_Q, Q, K and
// S for these sizes; then ui/score-view.js: the picked query's first components, its score
// with every key and that row as weights (bars), and the whole [query, key] score grid as a
// table whose row headers pick a query, the picked row marked. Found by labs/controller.js.
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { scoreView } from "../ui/score-view.js";
import { integerField, reseedButton, sentenceControls } from "../ui/sentence.js";

const shape = (s) => `(${s[0]}, ${s[1]})`;

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const sentence = sentenceControls(kit, lab, { query: true });
  const dHead = integerField(kit, lab, "d_head", "d_head");
  reseedButton(kit, lab, controls, "New random vectors");
  body.append(controls);

  const shapes = el("p", "attn-lab__shapes");
  shapes.setAttribute("aria-live", "polite");
  body.append(shapes);
  const view = scoreView(body, lab);

  function render(res) {
    const t = res.tokens;
    sentence.render(res);
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

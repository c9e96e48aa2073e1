// Widget for the meaning_shift lab (labs_py/attention_labs/labs/meaning_shift.py): a
// sentence picker, one weight slider per context word, the 2-D plane (embedding, context
// words, the update Δ from the embedding's tip, the updated vector, the senses as labelled
// points) and tables of the weights and of the cosines before and after. Found by
// labs/controller.js from the lab's name.
import { kindShape, vectorPlane } from "../ui/vector-plane.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";

const f2 = (v) => Number(v).toFixed(2);
const vec = (v) => `(${f2(v[0])}, ${f2(v[1])})`;

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;

  const sentence = field("sentence", "Sentence", el("select"));
  for (const choice of spec.sentence.choices) {
    const option = el("option", null, spec.sentence.labels[choice] || choice);
    option.value = choice;
    sentence.append(option);
  }
  sentence.value = lab.params.sentence;
  // A new sentence starts from the schema's weights (every slider at 1): the lesson's
  // "Things to try" can then be followed in order, each step from the same start.
  const resetWeights = () =>
    Object.fromEntries(["w1", "w2", "w3"].map((name) => [name, spec[name].default]));
  sentence.addEventListener("change", () =>
    lab.update({ sentence: sentence.value, ...resetWeights() }),
  );

  // One slider per context word; its label names the word (set in render).
  const sliders = ["w1", "w2", "w3"].map((name) => {
    const out = el("output", "attn-lab__value");
    const input = field(name, name, el("input"), out);
    Object.assign(input, { type: "range", min: 0, max: 1, step: 0.05, value: lab.params[name] });
    out.htmlFor = input.id;
    out.textContent = f2(lab.params[name]);
    input.addEventListener("input", () => {
      out.textContent = f2(input.value);
      lab.update({ [name]: Number(input.value) });
    });
    const label = input.closest(".attn-lab__field").querySelector("label");
    return { name, input, out, label };
  });
  const note = el(
    "p",
    "attn-lab__hint",
    "The sliders are raw weights: the lab divides each by their sum, so the weights it uses add up to 1. Picking a sentence puts every slider back at 1.",
  );
  controls.append(note);
  body.append(controls);

  const sentenceLine = el("p", "attn-lab__sentence");
  sentenceLine.setAttribute("aria-live", "polite");
  const figure = el("div", "attn-lab__figure");
  const plane = vectorPlane(figure, {
    label:
      "The ambiguous word's embedding x, the context words' vectors, the update Δ drawn from the tip of x, the updated vector x + Δ, and the senses as labelled points (a hand-built 2-D space).",
    extent: 2.5,
  });
  // The widget's own legend (the chart's would name the kinds only, and x + Δ is not a
  // second embedding): each entry is the arrow as drawn, with its kind's shape.
  const legend = el("ul", "attn-chart__legend attn-lab__plane-legend");
  legend.setAttribute("aria-hidden", "true"); // the caption and the tables say the same
  const ENTRIES = [
    ["other", false, "c1–c3: the context words (numbered in the sentence)"],
    ["embedding", false, "x: the embedding"],
    ["update", true, "Δ: the update (dashed)"],
    ["update", false, "x + Δ: the updated vector"],
  ];
  const svgEl = (name, attrs) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };
  for (const [kind, dashed, text] of ENTRIES) {
    const swatch = svgEl("svg", { class: "attn-chart__swatch", width: 36, height: 16 });
    const g = svgEl("g", { class: `attn-chart__kind--${kind}` });
    g.append(
      svgEl("path", {
        class: "attn-chart__shaft",
        d: "M2,8L34,8",
        ...(dashed ? { "stroke-dasharray": "6 4" } : {}),
      }),
      svgEl("path", {
        class: "attn-chart__kind",
        d: kindShape(kind, 70),
        transform: "translate(18,8)",
      }),
    );
    swatch.append(g);
    const li = el("li");
    li.append(swatch, el("span", null, text));
    legend.append(li);
  }
  {
    const swatch = svgEl("svg", { class: "attn-chart__swatch", width: 36, height: 16 });
    const dot = svgEl("g", { class: "attn-chart__dot" });
    dot.append(svgEl("circle", { cx: 18, cy: 8, r: 4 }));
    swatch.append(dot);
    const li = el("li");
    li.append(swatch, el("span", null, "dots: the senses"));
    legend.append(li);
  }
  const caption = el(
    "p",
    "attn-lab__hint",
    "Arrows from the origin: each context word's vector (c1, c2, c3, numbered as in the sentence), the embedding x and the updated vector x + Δ. Dashed: the update Δ, from the tip of x to x + Δ. Dots: the senses.",
  );
  figure.append(legend, caption);
  const chartLegend = () =>
    plane.figure.querySelector(".attn-chart__legend:not(.attn-lab__plane-legend)");
  const summary = el("p", "attn-lab__cell");
  summary.setAttribute("aria-live", "polite");
  const weights = dataTable({ label: "Weights on the context words" });
  const vectors = dataTable({ label: "The vectors" });
  const cosines = dataTable({ label: "Cosine similarity with each sense" });
  const tables = el("div");
  tables.append(weights.root, vectors.root, cosines.root);
  Object.assign(tables.style, { display: "flex", flexWrap: "wrap", gap: "0 1.5rem" });
  body.append(sentenceLine, figure, summary, tables);

  function render(res) {
    const word = res.word;
    // the sentence, the word in bold and each context word numbered (text, never HTML)
    const parts = [];
    res.tokens.forEach((token, i) => {
      if (i) parts.push(" ");
      const j = res.context_index.indexOf(i);
      if (i === res.word_index) parts.push(el("strong", null, token));
      else if (j >= 0) {
        const span = el("span", "attn-lab__context", token);
        span.style.textDecoration = "underline";
        span.append(el("sup", null, String(j + 1)));
        parts.push(span);
      } else parts.push(token);
    });
    sentenceLine.replaceChildren(...parts);

    sliders.forEach((s, j) => {
      s.label.textContent = `Weight on “${res.context_words[j]}”`;
      s.input.value = res.raw_weights[j];
      s.out.textContent = f2(res.raw_weights[j]);
      s.input.setAttribute(
        "aria-valuetext",
        `${f2(res.raw_weights[j])}, weight ${f2(res.weights[j])}`,
      );
    });
    sentence.value = lab.params.sentence;

    const x = Array.from(res.embedding);
    const updated = Array.from(res.updated);
    plane.update({
      vectors: [
        // short labels, so that they do not cover the senses' names: c1 is the context
        // word numbered 1 in the sentence (the weights table pairs them)
        ...res.context_vectors.map((c, j) => ({
          id: `c${j + 1}`,
          to: Array.from(c),
          label: `c${j + 1}`,
          kind: "other",
        })),
        // with Δ = 0 the two arrows coincide: one arrow, named for both
        { id: "x", to: x, label: res.reads_nothing ? "x = x + Δ" : "x", kind: "embedding" },
        ...(res.reads_nothing
          ? []
          : [
              // Δ ends where x + Δ does: one label there ("x + Δ"); the legend names the dash
              { id: "delta", from: x, to: updated, label: "", kind: "update", dashed: true },
              // thin spaces: a narrower label, clear of the context words' labels
              { id: "updated", to: updated, label: "x\u2009+\u2009Δ", kind: "update" },
            ]),
      ],
      // a sense's first word ("chemistry", not "chemistry unit"), so that the name stays
      // inside the frame; the cosine table gives the full names
      points: res.sense_names.map((name, i) => ({
        at: Array.from(res.sense_vectors[i]),
        label: name.split(" ")[0],
      })),
    });
    chartLegend().hidden = true; // the widget's legend above replaces it

    const before = res.sense_names[res.nearest_before];
    const after = res.sense_names[res.nearest_after];
    summary.textContent = res.reads_nothing
      ? `Every slider is at 0: “${word}” reads nothing, so Δ = 0 and x + Δ is x, nearest to the ${before} sense.`
      : `Nearest sense of “${word}”: ${before} (cosine ${f2(res.cos_before[res.nearest_before])}) before the update, ${after} (cosine ${f2(res.cos_after[res.nearest_after])}) after it.`;

    weights.fill({
      caption: "Weights on the context words",
      columns: ["Context word", "Slider", "Weight", "Vector"],
      rows: res.context_words.map((w, j) => [
        `${w} (c${j + 1})`,
        f2(res.raw_weights[j]),
        f2(res.weights[j]),
        vec(res.context_vectors[j]),
      ]),
    });
    vectors.fill({
      caption: "The vectors",
      columns: ["", "x", "y"],
      rows: [
        [`x (${word})`, f2(x[0]), f2(x[1])],
        ["Δ", f2(res.delta[0]), f2(res.delta[1])],
        ["x + Δ", f2(updated[0]), f2(updated[1])],
      ],
    });
    cosines.fill({
      caption: "Cosine similarity with each sense",
      columns: ["Sense", "x", "x + Δ"],
      rows: res.sense_names.map((name, i) => [name, f2(res.cos_before[i]), f2(res.cos_after[i])]),
    });
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: () => plane.destroy(),
  };
}

// The state of one map's view and the rules that keep it valid: what the index offers
// (models, sentences, their assets) and what an asset has (layers, heads, tokens). A link
// may name anything; these functions fall back to what exists and say what they changed.
//
// state: {model, sentence, view: "model"|"head", layer, head, query, stat, order,
//         exclude_first, compare: {model, layer, head} | null}

/** The first state of a map from its placeholder config. */
export function initialState(config, explorer) {
  return {
    model: config.model,
    sentence: config.sentence,
    view: config.view || (explorer ? "model" : "head"),
    layer: config.layer ?? 0,
    head: config.head ?? 0,
    query: config.query ?? null,
    stat: "previous_token",
    order: "layer",
    exclude_first: Boolean(config.exclude_first),
    compare: config.compare ? { model: config.model, ...config.compare } : null,
  };
}

/** The index entry of (model, sentence): {model, sentence, path, bytes}, or undefined. */
export function entryFor(index, model, sentence) {
  return index?.assets.find((a) => a.model === model && a.sentence === sentence);
}

/** The models of the index that have an asset of `sentence`. */
export function modelsFor(index, sentence) {
  const slugs = new Set(index.assets.filter((a) => a.sentence === sentence).map((a) => a.model));
  return index.models.filter((m) => slugs.has(m.slug));
}

/** The asset path of (model, sentence): the index's, or the conventional one. */
export function assetPath(index, model, sentence) {
  return entryFor(index, model, sentence)?.path ?? `${model}/${sentence}.json`;
}

/** Fall back to the configured model and sentence when `state` names unknown ones; the
 * notes say what was asked for and is not there. Changes `state` in place. */
export function fitToIndex(state, index, config) {
  const s = state;
  const notes = [];
  if (!index.models.some((m) => m.slug === s.model)) {
    notes.push(`model “${s.model}” is not among the precomputed models`);
    s.model = entryFor(index, config.model, s.sentence) ? config.model : index.models[0].slug;
  }
  if (!entryFor(index, s.model, s.sentence)) {
    notes.push(`there is no map of sentence “${s.sentence}” for this model`);
    s.sentence = entryFor(index, s.model, config.sentence)
      ? config.sentence
      : index.assets.find((a) => a.model === s.model).sentence;
  }
  if (s.compare?.model && !entryFor(index, s.compare.model, s.sentence)) {
    notes.push(`the compared model “${s.compare.model}” has no map of this sentence`);
    s.compare.model = s.model;
  }
  return notes;
}

/** Bring layer, head, query (and the compared head) within what `asset` (and the
 * compared model's `compareAsset`) has; notes for each value that was out of range. */
export function clampToAsset(state, asset, compareAsset) {
  const s = state;
  const { n_layers, n_heads } = asset.model;
  const notes = [];
  const clamp = (what, v, max) => {
    if (Number.isInteger(v) && v >= 0 && v < max) return v;
    notes.push(`${what} ${v} (this model has ${what}s 0–${max - 1})`);
    return 0;
  };
  s.layer = clamp("layer", s.layer, n_layers);
  s.head = clamp("head", s.head, n_heads);
  if (s.query !== null) s.query = clamp("query", s.query, asset.seq_len);
  if (s.compare) {
    const m = (compareAsset || asset).model;
    s.compare.layer = clamp("layer", s.compare.layer ?? s.layer, m.n_layers);
    s.compare.head = clamp("head", s.compare.head ?? (s.head + 1) % m.n_heads, m.n_heads);
  }
  return notes;
}

/**
 * The query of `to` (another asset of the same sentence, maybe another model's tokens)
 * that shows the same text as query `q` of `from`: the first token whose characters
 * (tokens.offsets) overlap q's. An added token ([CLS], <|endoftext|>) maps to the other
 * model's first token when it starts the sentence and to its last one otherwise
 * ([SEP]); a token with no overlap maps to the nearest one before it.
 */
export function matchQuery(from, q, to) {
  if (from === to || from.model.slug === to.model.slug) return q;
  const [start, end] = from.tokens.offsets[q];
  if (from.tokens.special[q] && start === end) return q === 0 ? 0 : to.seq_len - 1;
  let before = 0;
  for (let k = 0; k < to.seq_len; k++) {
    if (to.tokens.special[k]) continue;
    const [s, e] = to.tokens.offsets[k];
    if (s < Math.max(end, start + 1) && e > start) return k;
    if (e <= start) before = k;
  }
  return before;
}

// The explorer's view in the address: ?model=&sentence=&view=&layer=&head=&query=&stat=
// &order=&sinks=exclude&compare=model:layer:head. Links to a view work, and Back and
// Forward step between the grid and a head. A lesson's map writes the same parameters
// into its "Open in the explorer" link instead.
import { siteUrl } from "../runtime/site.js";
import { STATS } from "./parts.js";

const URL_KEYS = ["model", "sentence", "view", "layer", "head", "query", "stat", "order"];

/**
 * Merge the view named by `search` (location.search) into `state`, in place. A number
 * that is not a whole number becomes -1, which the map reports and clamps.
 */
export function readUrl(state, search = location.search) {
  const p = new URLSearchParams(search);
  const int = (v) => (v !== null && /^\d+$/.test(v) ? Number(v) : v === null ? undefined : -1);
  const s = state;
  if (p.get("model")) s.model = p.get("model");
  if (p.get("sentence")) s.sentence = p.get("sentence");
  if (p.get("view") === "head" || p.get("view") === "model") s.view = p.get("view");
  for (const key of ["layer", "head", "query"]) {
    const v = int(p.get(key));
    if (v !== undefined) s[key] = v;
  }
  if (p.get("stat") in STATS) s.stat = p.get("stat");
  if (p.get("order") === "ranked") s.order = "ranked";
  if (p.get("sinks") === "exclude") s.exclude_first = true;
  const cmp = p.get("compare");
  if (cmp) {
    const [model, layer, head] = cmp.split(":");
    s.compare = {
      model: model || s.model,
      layer: int(layer ?? null) ?? 0,
      head: int(head ?? null) ?? 0,
    };
  }
}

/** The URL parameters of `state`. */
export function urlParams(state) {
  const s = state;
  const p = new URLSearchParams();
  for (const key of URL_KEYS)
    if (s[key] !== null && s[key] !== undefined) p.set(key, String(s[key]));
  if (s.exclude_first) p.set("sinks", "exclude");
  if (s.compare) p.set("compare", `${s.compare.model}:${s.compare.layer}:${s.compare.head}`);
  return p;
}

/**
 * On the explorer page, put `state` in the address: opening a head (or going back to the
 * grid) is a step Back can undo; other changes only replace the address. Elsewhere, point
 * `link` (the "Open in the explorer" anchor) at the same view.
 */
export function writeUrl(state, { explorer, link }) {
  if (explorer) {
    const url = `${location.pathname}?${urlParams(state)}${location.hash}`;
    const view = new URLSearchParams(location.search).get("view");
    if (view && view !== state.view) history.pushState(history.state, "", url);
    else history.replaceState(history.state, "", url);
  } else if (link) {
    link.href = siteUrl(`explorer/?${urlParams(state)}`);
  }
}

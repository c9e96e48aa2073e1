// Mounts the page's attention maps (```attention-map placeholders, the explorer page's
// and lessons' embeds). Imported by main.js only on pages that have one.
import { placeholderConfig, track } from "../runtime/page.js";
import { AttentionMap } from "./map.js";

/** Mount every attention-map placeholder of the page not mounted yet. */
export function mountMaps() {
  for (const root of document.querySelectorAll(".attn-map:not([data-state])")) {
    const config = placeholderConfig(
      root,
      "This attention map's settings are damaged; rebuild the site.",
    );
    if (!config) continue;
    root.dataset.state = "loading";
    track(new AttentionMap(root, config));
  }
}

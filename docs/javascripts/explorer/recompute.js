// The explorer's recompute panel: a head whose queries and keys the asset carries can be
// recomputed by Python, as a lab made at run time. The lab is the one the page's config
// names (recompute.lab, from build_scripts/hooks/attention_map.py); its module labs/<name>.js
// gives the widget and realHeadData, so the explorer names no lab itself.
import { loadWidget, mountLab } from "../labs/controller.js";
import { el } from "../ui/dom.js";
import { button } from "./parts.js";

export class RecomputePanel {
  /**
   * @param {{lab: string, schema: object[], runtime: object} | null} recompute the page's
   *   config; null hides the panel
   * @param {(layer: number, head: number) => void} onPick opens another head
   */
  constructor(recompute, onPick) {
    this.config = recompute;
    this.onPick = onPick;
    this.root = el("section", "attn-map__recompute");
    this.root.setAttribute("aria-label", "Recompute this head in Python");
    this.root.hidden = !recompute;
    this.key = null;
    this.lab = null; // the LabController once the reader starts it
  }

  /** Offer to recompute head (layer, head) of `asset` (nothing changes if it is shown). */
  show(asset, layer, head) {
    if (!this.config) return;
    // The reader's own sentence (own-sentence.js) carries no queries and keys.
    this.root.hidden = asset.qkv.heads.length === 0;
    const key = `${asset.model.slug}/${asset.sentence.id}/${layer}/${head}`;
    if (this.key === key) return;
    this.key = key;
    this._dropLab();
    const entry = asset.qkv.heads.find((h) => h.layer === layer && h.head === head);
    const parts = [el("p", "attn-map__title", "Recompute this head in Python")];
    if (entry) {
      parts.push(
        el(
          "p",
          null,
          `The asset carries this head's real queries and keys (the model's ${entry.reason}, over all sentences). Python rebuilds the pattern as softmax(q·kᵀ/√d_head) from them; change the scaling, the temperature or the mask and see how this real head would behave.`,
        ),
      );
      const start = button("Recompute in Python", "attn-map__start");
      start.addEventListener("click", () => this._start(start, asset, entry, key));
      parts.push(start);
    } else {
      parts.push(
        el(
          "p",
          null,
          "Only a few heads carry their queries and keys in the asset: the model's strongest head of each kind, chosen once over all sentences. Pick one to recompute it:",
        ),
      );
      const list = el("ul", "attn-map__qkv");
      for (const h of asset.qkv.heads) {
        const li = el("li");
        const b = button(`Layer ${h.layer}, head ${h.head}: ${h.reason}`, "attn-map__qkv-head");
        b.addEventListener("click", () => this.onPick(h.layer, h.head));
        li.append(b);
        list.append(li);
      }
      parts.push(list);
    }
    this.root.replaceChildren(...parts);
  }

  async _start(start, asset, entry, key) {
    // A lab from the start (its styles, and tests find it), marked as being set up so that
    // no page pass mounts it as a placeholder while its widget loads.
    const box = el("div", "attn-lab");
    box.dataset.status = "loading";
    start.replaceWith(box);
    try {
      const { realHeadData } = await loadWidget(this.config.lab);
      const lab = await mountLab(box, realHeadData(asset, entry, this.config));
      if (this.key !== key || !box.isConnected) return lab.destroy(); // another head since
      this.lab = lab;
      lab.update({});
    } catch (err) {
      box.textContent = `The recompute could not start: ${err.message}`;
    }
  }

  _dropLab() {
    this.lab?.destroy();
    this.lab = null;
  }

  /** Stop the recompute lab, if one runs. */
  destroy() {
    this._dropLab();
  }
}

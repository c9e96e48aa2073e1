// The decoded heads of one asset, each decoded once, with the top of its colour scale with
// and without the first key.
import { decodeHead } from "../maps.js";

/** Decoded heads of one asset, with the colour-scale top with and without key 0. */
export class HeadCache {
  constructor(asset) {
    this.asset = asset;
    this.n = asset.seq_len;
    this.causal = asset.model.causal;
    this.heads = new Map();
  }

  /** {w: Float64Array(n * n) [query * n + key], vmaxNoFirst} of head (layer, head). */
  get(layer, head) {
    const key = `${layer}:${head}`;
    if (!this.heads.has(key)) {
      const w = decodeHead(this.asset, layer, head);
      const n = this.n;
      // Scale top without the first key: the largest weight on any other key.
      let noFirst = 0;
      for (let q = 0; q < n; q++)
        for (let k = 1; k < n; k++) if (w[q * n + k] > noFirst) noFirst = w[q * n + k];
      this.heads.set(key, { w, vmaxNoFirst: noFirst > 0 ? noFirst : 1 });
    }
    return this.heads.get(key);
  }

  /** The top of the colour scale for `entry` (get): 1, or the largest weight on a key
   * other than the first when `excludeFirst` (attention sinks). */
  vmax(entry, excludeFirst) {
    return excludeFirst ? entry.vmaxNoFirst : 1;
  }

  /** Query `q`'s weights over every key (a view into the decoded head). */
  row(layer, head, q) {
    return this.get(layer, head).w.subarray(q * this.n, (q + 1) * this.n);
  }
}

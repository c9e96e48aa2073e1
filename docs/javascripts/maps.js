/*
 * The one reader of the attention-map format in the browser (its writer and Python reader:
 * labs_py/attention_labs/maps.py): loads and checks the precomputed maps
 * (docs/assets/attention/) and decodes a head's weights, for the explorer and the labs alike.
 *
 * loadIndex()                   -> the index (models, sentences, asset paths)
 * loadAsset(path)               -> one asset, e.g. "all-minilm-l6-v2/bank-river.json"
 * decodeHead(asset, layer, head) -> Float64Array of seq_len * seq_len weights,
 *                                  row-major [query, key]
 *
 * Every file is checked against its JSON Schema (asset.schema.json, index.schema.json; ajv,
 * vendored from npm, loaded on first use) before anything uses it, and each head's byte count
 * is checked against seq_len. Failures reject with an AssetError whose message names the file
 * and what is wrong. Files are fetched once per page load (a Map of promises).
 * The decoding rule is documented in asset.schema.json and labs_py/attention_labs/maps.py.
 */
import { loadScript, siteUrl } from "./runtime/site.js";

export class AssetError extends Error {
  constructor(message) {
    super(message);
    this.name = "AssetError";
  }
}

const ASSETS = siteUrl("assets/attention/");
const AJV = "vendor/ajv/ajv2020.min.js";

const fetched = new Map();
const validators = new Map();

/** The ajv 2020 constructor (a vendored UMD bundle: the global ajv2020), loaded once. */
function loadAjv() {
  return loadScript(AJV, () => window.ajv2020, "the schema validator").catch((err) => {
    throw new AssetError(err.message);
  });
}

async function fetchJson(url, what) {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new AssetError(`${what} could not be downloaded from ${url}: ${err.message}`);
  }
  if (!response.ok) {
    throw new AssetError(
      `${what} could not be downloaded from ${url}: HTTP ${response.status}` +
        (response.status === 404 ? " (not found: run make precompute?)" : ""),
    );
  }
  try {
    return await response.json();
  } catch (err) {
    throw new AssetError(`${what} at ${url} is not valid JSON: ${err.message}`);
  }
}

function once(url, load) {
  if (!fetched.has(url)) {
    const p = load();
    fetched.set(url, p);
    p.catch(() => fetched.delete(url)); // a failed file may be fixed and retried
  }
  return fetched.get(url);
}

async function validator(schemaName) {
  if (!validators.has(schemaName)) {
    // The validator's script and the schema download in parallel.
    const [Ajv, schema] = await Promise.all([
      loadAjv(),
      fetchJson(new URL(schemaName, ASSETS).href, schemaName),
    ]);
    const ajv = new Ajv({ allErrors: false, strict: false });
    validators.set(schemaName, ajv.compile(schema));
  }
  return validators.get(schemaName);
}

async function checked(url, what, schemaName) {
  const [data, validate] = await Promise.all([fetchJson(url, what), validator(schemaName)]);
  if (!validate(data)) {
    const err = validate.errors[0];
    throw new AssetError(
      `${what} does not match ${schemaName} at ${err.instancePath || "(top level)"}: ${err.message}`,
    );
  }
  return data;
}

function storedCount(seqLen, causal) {
  return causal ? (seqLen * (seqLen + 1)) / 2 : seqLen * seqLen;
}

function headBytes(asset, layer, head) {
  const data = asset.attention.data;
  if (!(layer in data) || !(head in data[layer])) {
    throw new AssetError(
      `${asset.model.slug}/${asset.sentence.id}: no layer ${layer}, head ${head} ` +
        `(layers 0-${data.length - 1}, heads 0-${data[0].length - 1})`,
    );
  }
  const text = atob(data[layer][head]);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** The bytes that base64 text `s` (the schema's alphabet) decodes to, as atob counts them
 * (padding optional), or -1 for a length atob refuses: counted, not decoded (decoding
 * SmolLM2's 270 heads only to count them took 20 ms at 4x CPU throttling). */
function base64Bytes(s) {
  let len = s.length;
  if (len % 4 === 0) len -= s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  else if (s.includes("=")) return -1; // padding only on a whole number of quads
  return len % 4 === 1 ? -1 : Math.floor((len * 3) / 4);
}

function checkShape(asset, what) {
  const n = asset.seq_len;
  const expected = storedCount(n, asset.model.causal);
  const t = asset.tokens;
  if ([t.text, t.ids, t.offsets, t.special].some((a) => a.length !== n)) {
    throw new AssetError(`${what}: tokens do not have seq_len = ${n} entries`);
  }
  if (asset.attention.data.length !== asset.model.n_layers) {
    throw new AssetError(
      `${what}: ${asset.attention.data.length} layers, model says ${asset.model.n_layers}`,
    );
  }
  asset.attention.data.forEach((heads, layer) => {
    if (heads.length !== asset.model.n_heads) {
      throw new AssetError(
        `${what}: layer ${layer} has ${heads.length} heads, model says ${asset.model.n_heads}`,
      );
    }
    heads.forEach((text, head) => {
      const got = base64Bytes(text);
      if (got < 0) throw new AssetError(`${what}: layer ${layer}, head ${head} is not base64`);
      if (got !== expected) {
        throw new AssetError(
          `${what}: layer ${layer}, head ${head} holds ${got} bytes; seq_len ${n} needs ${expected}`,
        );
      }
    });
  });
}

/** The index of every model, sentence and asset (validated). */
export function loadIndex() {
  const url = new URL("index.json", ASSETS).href;
  return once(url, () => checked(url, "the attention-map index", "index.schema.json"));
}

/** One asset, validated and shape-checked; `path` like "model/sentence.json". */
export function loadAsset(path) {
  if (typeof path !== "string" || !/^[a-z0-9-]+\/[a-z0-9-]+\.json$/.test(path)) {
    return Promise.reject(
      new AssetError(`asset path ${JSON.stringify(path)} must look like "model/sentence.json"`),
    );
  }
  const url = new URL(path, ASSETS).href;
  return once(url, async () => {
    const asset = await checked(url, `attention map ${path}`, "asset.schema.json");
    checkShape(asset, `attention map ${path}`);
    return asset;
  });
}

/** Weights of one head: Float64Array(seq_len * seq_len), [query * seq_len + key]. */
export function decodeHead(asset, layer, head) {
  const n = asset.seq_len;
  const denominator = asset.attention.denominator;
  const bytes = headBytes(asset, layer, head);
  const out = new Float64Array(n * n);
  if (asset.attention.layout === "full") {
    for (let i = 0; i < n * n; i++) out[i] = bytes[i] / denominator;
  } else {
    let b = 0; // lower triangle, row after row: row q holds keys 0..q
    for (let q = 0; q < n; q++) {
      for (let k = 0; k <= q; k++) out[q * n + k] = bytes[b++] / denominator;
    }
  }
  return out;
}

/** Where the assets are (absolute URL, ending in "/"). */
export const root = ASSETS;

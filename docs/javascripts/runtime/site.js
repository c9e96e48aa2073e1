// Where the site's files are, from this module's own URL (…/javascripts/runtime/site.js),
// so it works on any host, under any path prefix and after instant navigation.

/** The site root, ending in "/". */
export const SITE_ROOT = new URL("../../", import.meta.url).href;

/** The absolute URL of `path` (relative to the site root, e.g. "vendor/ajv/ajv2020.min.js"). */
export function siteUrl(path) {
  return new URL(path, SITE_ROOT).href;
}

/** Load a vendored classic (UMD) script once; resolves with `global()` once it has run.
 * Vendored bundles (CodeMirror, ajv) set a window global, so they cannot be imported. */
const scripts = new Map();
export function loadScript(path, global, what) {
  if (!scripts.has(path)) {
    const loaded = new Promise((resolve, reject) => {
      if (global()) return resolve(global());
      const script = document.createElement("script");
      script.src = siteUrl(path);
      script.onload = () => resolve(global());
      script.onerror = () => {
        scripts.delete(path); // a later call may try again
        script.remove();
        reject(new Error(`${what} could not be loaded from ${script.src}`));
      };
      document.head.append(script);
    });
    scripts.set(path, loaded);
  }
  return scripts.get(path);
}

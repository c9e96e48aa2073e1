// The page lifecycle under Material's instant navigation, which swaps a page's content
// without reloading: components (labs, cells, exercises, maps) are mounted on every page
// change and destroyed when their page goes, so nothing of an old page keeps listening.
//
// A component is any object {root, destroy()}; `track` keeps it until `destroyDetached`
// (run first on every page change by main.js) finds its root out of the document.

const components = new Set();

/** Run `callback()` now and after every page change of instant navigation (document$,
 * Material's global). Module scripts run after the page is parsed, so its placeholders
 * are there; `callback` must be idempotent (document$ also replays the first page). */
export function onEveryPage(callback) {
  callback();
  if (typeof document$ !== "undefined") document$.subscribe(() => callback());
}

// Modules the page's head imported statically (build_scripts/hooks/preload.py writes that
// script): an import(), even of a module already evaluated, resolves only some 100-300 ms
// after DOMContentLoaded in Chromium, while a static import is evaluated before it, so a
// lab drawn from a provided widget is drawn with the text.
const provided = new Map(); // key -> module namespace

/** Hand over `module` (a namespace the head's script imported) under `key` (a lab's name,
 * or "controller" for labs/controller.js): providedModule returns it at once. */
export function provide(key, module) {
  provided.set(key, module);
}

/** The module handed over under `key` by `provide`, or undefined. */
export function providedModule(key) {
  return provided.get(key);
}

/** Keep `component` ({root, destroy()}) until its root leaves the page; returns it. */
export function track(component) {
  components.add(component);
  return component;
}

/** Destroy every tracked component whose root is no longer in the document (the page
 * it lived on was swapped away): CodeMirror views, observers, window listeners go. */
export function destroyDetached() {
  for (const component of components) {
    if (component.root.isConnected) continue;
    components.delete(component);
    try {
      component.destroy();
    } catch (err) {
      console.error("destroying a component of the previous page failed", err);
    }
    // Material keeps a reference into every page it swaps away (its table of contents),
    // and so that page's whole tree. An empty copy in place of the component's root lets
    // the component's elements, their listeners and its state go all the same.
    if (component.root.parentNode) component.root.replaceWith(component.root.cloneNode(false));
  }
}

/** How many components are mounted now (for tests). */
export function liveCount() {
  return components.size;
}

/** The JSON in a placeholder's data attribute `key`, or null after writing `damaged`
 * into the placeholder. */
export function placeholderConfig(root, damaged, key = "config") {
  try {
    return JSON.parse(root.dataset[key]);
  } catch {
    root.textContent = damaged;
    return null;
  }
}

/** Call `callback` once, when any of `targets` comes within half a screen of view, so
 * what it loads is ready as the reader arrives and never loads for one who does not.
 * Returns the IntersectionObserver (disconnect() cancels). */
export function whenNear(targets, callback) {
  const observer = new IntersectionObserver(
    (entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        observer.disconnect();
        callback();
      }
    },
    { rootMargin: "0px 0px 50% 0px" },
  );
  for (const target of targets) observer.observe(target);
  return observer;
}

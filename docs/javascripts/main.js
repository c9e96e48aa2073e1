// The one script of the site that every page loads (an ES module, mkdocs.yml). On the
// first page and after every page change of Material's instant navigation it destroys
// the components of the page that went, then imports only the code the new page's
// placeholders need: labs/ for a lab, cells/ (and, once near, CodeMirror) for a cell or
// exercise, explorer/ for an attention map. A page without any loads none of them.
import { runtime } from "./runtime/lab-runtime.js";
import { destroyDetached, liveCount, onEveryPage, providedModule } from "./runtime/page.js";
import { renderMath } from "./katex-init.js";
import { nameSearchDialog } from "./ui/material-a11y.js";

// A read-only inspection handle for tests and benchmarks (tests/, build_scripts/bench/bench.py):
// nothing in the site reads it; modules import what they use.
window.AttnLabs = Object.freeze({ runtime, liveCount });

const LAB_NAME = /^[a-z][a-z0-9_]*$/;

/** Import the labs' widget modules (labs/<name>.js) alongside the controller, not after
 * it, where the head did not provide them (a page reached by instant navigation keeps the
 * first page's head): the lab's first picture waits for both, so one round of fetches. */
function prefetchWidgets() {
  for (const root of document.querySelectorAll(".attn-lab:not([data-status])")) {
    const name = /"lab":\s*"([^"]+)"/.exec(root.dataset.config || "")?.[1];
    if (name && LAB_NAME.test(name) && !providedModule(name))
      import(`./labs/${name}.js`).catch(() => {}); // the mount reports a failure
  }
}

// [placeholders not mounted yet, the module that mounts them, its mount function], labs
// first: cells and maps are imported once the labs have drawn, so that nothing competes
// with a lab's first picture.
// The controller comes from the head's static imports where the build wrote them (page.js).
const LABS = [
  ".attn-lab:not([data-status])",
  () => Promise.resolve(providedModule("controller") || import("./labs/controller.js")),
  "mountLabs",
];
const OTHERS = [
  [
    ".attn-cell:not([data-state]), .attn-exercise:not([data-mounted])",
    () => import("./cells/index.js"),
    "mountCells",
  ],
  [".attn-map:not([data-state])", () => import("./explorer/index.js"), "mountMaps"],
];

// Modules already imported, by mount function: a later page mounts with them at once (an
// import() of a loaded module still waits a task, and the new page would show its bare
// placeholders meanwhile).
const loaded = new Map();

/** Import and run the mount of one kind of placeholder if the page has any. */
function mountPart([selector, load, mount]) {
  if (!document.querySelector(selector)) return Promise.resolve();
  if (loaded.has(mount)) return Promise.resolve(loaded.get(mount)[mount]());
  return load().then(
    (module) => {
      loaded.set(mount, module);
      return module[mount]();
    },
    (err) => {
      // The build's static content stays; say why nothing became live.
      for (const root of document.querySelectorAll(selector)) {
        root.dataset.failed = "true";
        root.append(
          Object.assign(document.createElement("p"), {
            className: "attn-lab__error",
            textContent: `This part of the page could not be loaded: ${err.message}`,
          }),
        );
      }
    },
  );
}

async function mountPage() {
  destroyDetached();
  nameSearchDialog();
  prefetchWidgets();
  await mountPart(LABS);
  await Promise.all(OTHERS.map(mountPart));
  renderMath(); // last: KaTeX must not delay the labs, cells and maps
}

onEveryPage(mountPage);

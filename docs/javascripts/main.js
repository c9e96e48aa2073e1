// The one script of the site that every page loads (an ES module, mkdocs.yml). On the
// first page and after every page change of Material's instant navigation it destroys
// the components of the page that went, then imports only the code the new page's
// placeholders need: labs/ for a lab, cells/ (and, once near, CodeMirror) for a cell or
// exercise, explorer/ for an attention map. A page without any loads none of them.
import { runtime } from "./runtime/lab-runtime.js";
import { destroyDetached, liveCount, onEveryPage } from "./runtime/page.js";
import { nameSearchDialog } from "./ui/material-a11y.js";

// A read-only inspection handle for tests and benchmarks (tests/, build_scripts/bench.py):
// nothing in the site reads it; modules import what they use.
window.AttnLabs = Object.freeze({ runtime, liveCount });

// [placeholders not mounted yet, the module that mounts them, its mount function]
const PARTS = [
  [".attn-lab:not([data-status])", () => import("./labs/controller.js"), "mountLabs"],
  [
    ".attn-cell:not([data-state]), .attn-exercise:not([data-mounted])",
    () => import("./cells/index.js"),
    "mountCells",
  ],
  [".attn-map:not([data-state])", () => import("./explorer/index.js"), "mountMaps"],
];

function mountPage() {
  destroyDetached();
  nameSearchDialog();
  for (const [selector, load, mount] of PARTS) {
    if (!document.querySelector(selector)) continue;
    load().then(
      (module) => module[mount](),
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
}

onEveryPage(mountPage);

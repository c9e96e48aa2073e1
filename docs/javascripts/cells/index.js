// Mounts the page's editable Python cells and auto-checked exercises (placeholders from
// build_scripts/hooks/pycell.py, exercise.py) on the one shared Python worker (runtime/lab-runtime.js).
//
// Cells on a page share one namespace; a new view of a page starts with an empty one,
// like a fresh notebook. Python starts, and the editor loads, when a cell or exercise
// comes within half a screen of view. Imported by main.js only on pages that have cells
// or exercises.
import { runtime } from "../runtime/lab-runtime.js";
import { track, whenNear } from "../runtime/page.js";
import { el } from "../ui/dom.js";
import { CellController } from "./cell.js";
import { requestEditor } from "./editor.js";
import { CodeExercise, NumericExercise } from "./exercise.js";

const cells = new Set(); // this page's cells, told when Python restarts
let views = 0;

// One listener for the whole visit (this module is evaluated once): a restart (any
// cell's Stop, a Retry) wipes the variables of every cell of the page.
runtime.addEventListener("restart", (event) => {
  for (const cell of cells) cell.onRestart(event.detail.reason);
});

/** What the page change must undo for the near-observer of a page. */
class NearWatch {
  constructor(root, targets) {
    this.root = root; // the page's content: it leaves the document with the page
    this.observer = whenNear(targets, () => {
      runtime.preload();
      requestEditor();
    });
  }

  destroy() {
    this.observer.disconnect();
  }
}

function mountCell(root, page) {
  try {
    const cell = new CellController(root, JSON.parse(root.dataset.cellConfig), page);
    cells.add(cell);
    track({
      root,
      destroy: () => {
        cells.delete(cell);
        cell.destroy();
      },
    });
  } catch (err) {
    root.textContent = `This cell could not be set up (${err.message}); rebuild the site.`;
  }
}

function mountExercise(root) {
  root.dataset.mounted = "true";
  try {
    const data = JSON.parse(root.dataset.cellConfig);
    const exercise =
      data.kind === "numeric" ? new NumericExercise(root, data) : new CodeExercise(root, data);
    track(exercise);
  } catch (err) {
    root.append(el("p", "attn-lab__error", `This exercise could not be set up (${err.message}).`));
  }
}

/** Mount the cells and exercises of the page that are not mounted yet. */
export function mountCells() {
  const fresh = document.querySelectorAll(".attn-cell:not([data-state])");
  const exercises = document.querySelectorAll(".attn-exercise:not([data-mounted])");
  if (fresh.length) {
    const page = `${location.pathname}#${++views}`;
    runtime.forgetNamespaces(page);
    for (const root of fresh) mountCell(root, page);
  }
  for (const root of exercises) mountExercise(root);
  const targets = [...fresh, ...[...exercises].filter((e) => e.dataset.kind === "code")];
  const content = targets[0]?.closest("article") || targets[0]?.parentElement;
  if (content) track(new NearWatch(content, targets));
}

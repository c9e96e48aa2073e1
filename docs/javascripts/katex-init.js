// Render the \( \) and \[ \] spans that pymdownx.arithmatex (generic mode) leaves in the
// page, and a notebook's $ and $$. main.js calls renderMath on the first load and after
// every instant-navigation page change, once the page's labs have drawn their first
// picture: parsing KaTeX (280 kB) and rendering a lesson's math take a while, so they must
// not delay them. KaTeX is a vendored UMD bundle (the globals katex, renderMathInElement),
// loaded only by a page that has math.
// The math in view is rendered at once, the rest once Python's start-up is over (ready and
// idle, or failed: runtime.whenSettled), a few formulas per idle moment: all of lesson 3's
// math took the main thread ~0.4 s in one task, while the Python worker was starting
// beside it on the same two cores (a Chromium trace from navigation).
import { runtime } from "./runtime/lab-runtime.js";
import { loadScript } from "./runtime/site.js";

const rendered = new WeakSet(); // the content elements already rendered
const DELIMITERS = {
  delimiters: [
    { left: "\\(", right: "\\)", display: false },
    { left: "\\[", right: "\\]", display: true },
  ],
  throwOnError: false,
};
// How far outside the viewport a formula counts as in view (one it is about to reach).
const NEAR = "300px 0px";

async function loadKatex() {
  await loadScript("vendor/katex/katex.min.js", () => window.katex, "KaTeX");
  // auto-render needs the katex global when it runs
  await loadScript(
    "vendor/katex/contrib/auto-render.min.js",
    () => window.renderMathInElement,
    "KaTeX's auto-render",
  );
}

/** Run `work(deadline)` when the main thread is idle (a short slice where the browser has
 * no requestIdleCallback: Safari). */
const idle = (work) =>
  typeof requestIdleCallback === "function"
    ? requestIdleCallback(work, { timeout: 500 })
    : setTimeout(() => work({ timeRemaining: () => 8 }), 16);

/** Render the page's math with KaTeX, loading it first if the page has any: what is in
 * view at once, the rest after Python's start-up. Resolves when all of it is rendered. */
export async function renderMath() {
  // Once per page: main.js runs for the first page twice (at once and on document$).
  const page = document.querySelector(".md-content") || document.body;
  if (rendered.has(page)) return;
  rendered.add(page);
  if (!document.querySelector(".arithmatex, .jupyter-wrapper")) return;
  try {
    await loadKatex();
  } catch (err) {
    console.error(err.message); // the TeX source stays readable as text
    return;
  }
  const waiting = new Set(document.querySelectorAll(".arithmatex"));
  const render = (element) => waiting.delete(element) && renderMathInElement(element, DELIMITERS);
  const inView = new IntersectionObserver(
    (entries) => {
      for (const entry of entries)
        if (entry.isIntersecting) {
          inView.unobserve(entry.target);
          render(entry.target);
        }
    },
    { rootMargin: NEAR },
  );
  for (const element of waiting) inView.observe(element);
  // The table of contents copies a heading's math outside the arithmatex spans; it is in
  // view from the first paint on a wide screen, and small.
  const toc = document.querySelector(".md-sidebar--secondary");
  if (toc) renderMathInElement(toc, DELIMITERS);
  await runtime.whenSettled();
  await new Promise((resolve) => {
    const slice = (deadline) => {
      for (const element of waiting) {
        inView.unobserve(element);
        render(element);
        if (deadline.timeRemaining() < 2) break;
      }
      if (waiting.size) idle(slice);
      else resolve();
    };
    idle(slice);
  });
  inView.disconnect();
  // Whatever math is outside the arithmatex spans (a heading's copy in the table of contents).
  renderMathInElement(document.body, DELIMITERS);
  // Notebook pages (mkdocs-jupyter) keep Jupyter's $ and $$ delimiters.
  for (const notebook of document.querySelectorAll(".jupyter-wrapper")) {
    renderMathInElement(notebook, {
      delimiters: [
        { left: "$$", right: "$$", display: true },
        { left: "$", right: "$", display: false },
      ],
      ignoredClasses: ["jp-OutputArea", "highlight-ipynb"],
      throwOnError: false,
    });
  }
  // Widths are final once KaTeX's fonts are in.
  document.fonts.ready.then(markWideFormulas);
}

// A formula wider than the screen scrolls sideways: make it reachable by keyboard.
function markWideFormulas() {
  for (const block of document.querySelectorAll("div.arithmatex")) {
    if (block.scrollWidth > block.clientWidth && !block.hasAttribute("tabindex")) {
      block.tabIndex = 0;
      block.setAttribute("role", "region");
      block.setAttribute("aria-label", "Formula (scrolls sideways)");
    }
  }
}

// Render the \( \) and \[ \] spans that pymdownx.arithmatex (generic mode) leaves in the
// page, and a notebook's $ and $$. main.js calls renderMath on the first load and after
// every instant-navigation page change, once the page's labs have drawn their first
// picture: parsing KaTeX (280 kB) and rendering a lesson's math take a while, so they must
// not delay them. KaTeX is a vendored UMD bundle (the globals katex, renderMathInElement),
// loaded only by a page that has math.
import { loadScript } from "./runtime/site.js";

const rendered = new WeakSet(); // the content elements already rendered

async function loadKatex() {
  await loadScript("vendor/katex/katex.min.js", () => window.katex, "KaTeX");
  // auto-render needs the katex global when it runs
  await loadScript(
    "vendor/katex/contrib/auto-render.min.js",
    () => window.renderMathInElement,
    "KaTeX's auto-render",
  );
}

/** Render the page's math with KaTeX, loading it first if the page has any. */
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
  renderMathInElement(document.body, {
    delimiters: [
      { left: "\\(", right: "\\)", display: false },
      { left: "\\[", right: "\\]", display: true },
    ],
    throwOnError: false,
  });
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

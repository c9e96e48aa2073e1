// Render the \( \) and \[ \] spans that pymdownx.arithmatex (generic mode) leaves in the
// page, on the first load and after every instant-navigation page change. A module listed
// after KaTeX's deferred scripts in mkdocs.yml, so it runs after them (the globals katex
// and renderMathInElement), and never before a lab's first picture.
function render() {
  if (typeof renderMathInElement !== "function") return;
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
if (typeof document$ !== "undefined") document$.subscribe(render);
else document.addEventListener("DOMContentLoaded", render);

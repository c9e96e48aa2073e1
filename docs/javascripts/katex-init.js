// Render the \( \) and \[ \] spans that pymdownx.arithmatex (generic mode) leaves in the
// page, on the first load and after every instant-navigation page change.
(function () {
  "use strict";
  function render() {
    if (typeof renderMathInElement !== "function") return;
    renderMathInElement(document.body, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  }
  if (typeof document$ !== "undefined") document$.subscribe(render);
  else document.addEventListener("DOMContentLoaded", render);
})();

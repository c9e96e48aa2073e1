// Accessibility fixes for parts of the Material theme this site does not template itself.
//
// The search overlay is a role="dialog" with no accessible name (axe: aria-dialog-name):
// a screen reader announces only "dialog". Runs on every page change (instant navigation).
(function () {
  "use strict";
  function nameSearchDialog() {
    const dialog = document.querySelector(".md-search[role=dialog]");
    if (dialog && !dialog.hasAttribute("aria-label")) dialog.setAttribute("aria-label", "Search");
  }
  if (window.document$) window.document$.subscribe(nameSearchDialog);
  else nameSearchDialog();
})();

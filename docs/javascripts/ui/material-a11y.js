// Accessibility fixes for parts of the Material theme this site does not template itself.
//
// The search overlay is a role="dialog" with no accessible name (axe: aria-dialog-name):
// a screen reader announces only "dialog". main.js runs it on every page change.

/** Give Material's search dialog its accessible name (idempotent). */
export function nameSearchDialog() {
  const dialog = document.querySelector(".md-search[role=dialog]");
  if (dialog && !dialog.hasAttribute("aria-label")) dialog.setAttribute("aria-label", "Search");
}

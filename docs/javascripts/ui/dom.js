// The one DOM helper every widget uses.

const FORM_CONTROLS = new Set(["input", "select", "textarea"]);

/**
 * document.createElement with a class and text (text, never HTML).
 * Form controls get autocomplete="off": they are drawn from the component's state, and a
 * browser restoring their old values after Back (a full page load) would show values the
 * drawing does not use.
 */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  if (FORM_CONTROLS.has(tag)) node.setAttribute("autocomplete", "off");
  return node;
}

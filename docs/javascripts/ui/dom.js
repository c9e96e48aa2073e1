// The one DOM helper every widget uses, and two ways to let the browser breathe between
// slices of a long drawing (no main-thread task over 100 ms, issue 24).

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

/** Resolves in a later task, after the browser has had a turn for input (scheduler.yield
 * where there is one, else a timeout). */
export function nextTask() {
  return globalThis.scheduler?.yield
    ? globalThis.scheduler.yield()
    : new Promise((resolve) => setTimeout(resolve, 0));
}

/** Resolves after the browser has drawn its next frame (styles and layout are then fresh,
 * so reading a size does not force them inside the caller's task). */
export function afterFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

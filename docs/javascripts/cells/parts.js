// Pieces shared by cells and code exercises: toolbar buttons, the runtime's waiting
// messages, the editor/status/output boxes and what ends every Run and Check.
import { runtime } from "../runtime/lab-runtime.js";
import { el } from "../ui/dom.js";
import { renderOutputs } from "./outputs.js";

/** A Material button of a cell's toolbar. */
export function button(text, className, label) {
  const b = el("button", `md-button attn-cell__button ${className}`, text);
  b.type = "button";
  if (label) b.setAttribute("aria-label", label);
  return b;
}

// Runtime messages shared by cells and code exercises.
export function waitingText() {
  const { state, progress } = runtime;
  if (state === "ready") return "Running…";
  if (state === "failed") return `${progress.message}.`;
  // "Downloading Python" reads "downloading Python" mid-sentence: only the first letter changes.
  const message = progress.message.charAt(0).toLowerCase() + progress.message.slice(1);
  return `Waiting for Python: ${message} (step ${progress.step} of ${progress.total})…`;
}
export const RESET_TEXT =
  "Python was restarted to stop the code, so every variable of this page's cells is gone. " +
  "Nothing was re-run: run the cells you need again, from the top.";

/** The editor box (holding the build's static code until the editor loads), a status
 * line and a hidden, live output area named `outputLabel`: shared by cells and code
 * exercises. */
export function codeParts(static_, outputLabel) {
  const editorBox = el("div", "attn-cell__editor");
  if (static_) editorBox.append(static_);
  const status = el("p", "attn-cell__status");
  status.setAttribute("role", "status");
  const output = el("div", "attn-cell__output");
  output.setAttribute("aria-live", "polite");
  output.setAttribute("aria-label", outputLabel);
  output.hidden = true;
  return { editorBox, status, output, heatmaps: [] };
}

/** Empty `widget`'s output box (a cell or code exercise), destroying its heatmaps. */
export function clearOutput(widget) {
  for (const heatmap of widget.heatmaps.splice(0)) heatmap.destroy();
  widget.output.textContent = "";
  widget.output.hidden = true;
}

/** Draw output `items` (renderOutputs) into `widget`'s output box. */
export function addOutputs(widget, items) {
  widget.heatmaps.push(...renderOutputs(widget.output, items));
}

/** What a cell or code exercise must let go of when its page goes: the CodeMirror view,
 * its heatmaps' palette observers and a runtime listener of a run still in flight. */
export function destroyCode(widget) {
  widget.destroyed = true;
  widget.editor.destroy();
  for (const heatmap of widget.heatmaps.splice(0)) heatmap.destroy();
  if (widget.onRuntime) runtime.removeEventListener("change", widget.onRuntime);
}

/** What ends every Run and Check, however it went: the runtime listener goes, the
 * output shows if there is any, `mainButton` (Run or Check) is back and Stop is off. */
export function endRun(widget, mainButton, onRuntime) {
  runtime.removeEventListener("change", onRuntime);
  widget.output.hidden = !widget.output.childElementCount;
  widget.running = false;
  mainButton.disabled = false;
  widget.stopButton.disabled = true;
}

// One editable Python cell: Run, Stop, Reset, output. Cells of a page share one namespace
// in the worker (`page`); Stop interrupts Python (cross-origin isolated pages) or restarts
// the worker, and then says that the namespace was reset: nothing is re-run behind the
// reader's back.
import { runtime } from "../runtime/lab-runtime.js";
import { el } from "../ui/dom.js";
import { Editor } from "./editor.js";
import {
  addOutputs,
  button,
  clearOutput,
  codeParts,
  destroyCode,
  endRun,
  RESET_TEXT,
  waitingText,
} from "./parts.js";

/** A duration in ms as the status line says it: "12 ms" below a second, else "3.8 s". */
const seconds = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

export class CellController {
  constructor(root, data, page) {
    this.root = root;
    this.n = data.n;
    this.page = page;
    this.runs = 0;
    this.running = false;
    runtime.configure(data.runtime);
    root.attnCell = this;

    const static_ = root.querySelector(".attn-cell__static");
    const code = data.code;
    this.toolbar = el("div", "attn-cell__toolbar");
    this.toolbar.append(el("span", "attn-cell__label", `Python cell ${this.n}`));
    this.runButton = button("Run", "attn-cell__run", `Run cell ${this.n}`);
    this.runButton.setAttribute("aria-keyshortcuts", "Shift+Enter");
    this.runButton.title = "Run (Shift+Enter)";
    this.stopButton = button("Stop", "attn-cell__stop", `Stop cell ${this.n}`);
    this.stopButton.disabled = true;
    this.resetButton = button("Reset", "attn-cell__reset", `Reset the code of cell ${this.n}`);
    this.toolbar.append(this.runButton, this.stopButton, this.resetButton);
    Object.assign(this, codeParts(static_, `Output of cell ${this.n}`));
    root.textContent = "";
    root.append(this.toolbar, this.editorBox, this.status, this.output);
    this.editor = new Editor(this.editorBox, code, `Code of Python cell ${this.n}`, () =>
      this.run(),
    );
    this.runButton.addEventListener("click", () => this.run());
    this.stopButton.addEventListener("click", () => this.stop());
    this.resetButton.addEventListener("click", () => {
      this.editor.code = code;
      this.editor.focus();
    });
    root.dataset.state = "idle";
    root.dataset.runs = "0";
  }

  async run() {
    if (this.running) return;
    this.running = true;
    this.root.dataset.state = "running";
    this.runButton.disabled = true;
    clearOutput(this);
    this.status.textContent = waitingText();
    const onRuntime = () => {
      if (this.running && !this.started) this.status.textContent = waitingText();
    };
    this.onRuntime = onRuntime;
    runtime.addEventListener("change", onRuntime);
    this.started = false;
    // "Ran in" counts the code's own time, from the moment Python began running it; a wait
    // for Python to start is said apart.
    const asked = performance.now();
    let t0 = asked;
    let state = "done";
    try {
      const out = await runtime.runCell(this.page, this.editor.code, `<cell ${this.n}>`, {
        onStart: () => {
          t0 = performance.now();
          this.started = true;
          this.stopButton.disabled = false;
          this.status.textContent = "Running… (Stop ends it)";
        },
        onOutput: (items) => {
          this.output.hidden = false;
          addOutputs(this, items);
        },
      });
      const ms = performance.now() - t0;
      const waited = t0 - asked;
      addOutputs(this, out.outputs);
      if (out.value !== null) this.output.append(el("pre", "attn-cell__value", out.value));
      if (out.interrupted) {
        state = "stopped";
        this.output.append(el("pre", "attn-cell__error", "KeyboardInterrupt"));
        this.status.textContent = "Stopped. Your variables from earlier runs are kept.";
      } else if (out.error) {
        state = "error";
        this.output.append(el("pre", "attn-cell__error", out.error));
        const hint =
          /NameError/.test(out.error) && this.n > 1
            ? " Cells share variables: run the cells above first."
            : "";
        this.status.textContent = `The cell raised an error (traceback below).${hint}`;
      } else {
        const waitedText = waited >= 1000 ? ` (after ${seconds(waited)} waiting for Python)` : "";
        this.status.textContent = `Ran in ${seconds(ms)}${waitedText}.`;
      }
      this.runs += 1;
    } catch (err) {
      state = err.restarted ? "stopped" : "error";
      this.status.textContent = err.restarted
        ? RESET_TEXT
        : `Could not run the cell: ${err.message}. Press Run to try again.`;
    } finally {
      endRun(this, this.runButton, onRuntime);
      this.root.dataset.state = state;
      this.root.dataset.runs = String(this.runs);
      this.root.dispatchEvent(new CustomEvent("cell:done", { detail: { state } }));
    }
  }

  async stop() {
    this.stopButton.disabled = true;
    this.status.textContent = "Stopping…";
    await runtime.stop();
  }

  /** Let go of the editor, heatmaps and runtime listener (the page is going). */
  destroy() {
    destroyCode(this);
  }

  /** Python was restarted (by any cell's Stop or a Retry): this page's variables are gone. */
  onRestart() {
    if (!this.running && this.runs > 0) {
      this.status.textContent =
        "Python was restarted: this cell's variables are gone. Run it again if you need them.";
      this.root.dataset.state = "reset";
    }
  }
}

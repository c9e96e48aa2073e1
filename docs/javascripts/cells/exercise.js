// Auto-checked exercises: numeric answers checked in the page, and code completed by the
// reader and checked by hidden tests in Python. Progress (solved or not) lives in the
// reader's localStorage only.
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
  waitingText,
} from "./parts.js";

const STORE = "attn-labs:solved:";

function solvedKey(id) {
  return `${STORE}${location.pathname}#${id}`;
}
function isSolved(id) {
  try {
    return localStorage.getItem(solvedKey(id)) === "1";
  } catch (_err) {
    return false; // storage blocked: progress is simply not kept
  }
}
function markSolved(root, id) {
  try {
    localStorage.setItem(solvedKey(id), "1");
  } catch (_err) {
    /* storage blocked */
  }
  showSolved(root);
}
function showSolved(root) {
  root.dataset.solved = "true";
  const badge = root.querySelector(".attn-exercise__badge");
  if (badge) badge.hidden = false;
}

/** Parse a typed number: "0.25", "-1", ".5", "2,5" (decimal comma), "1e-3", and "1,048,576"
 * or "2,048" (commas as thousands separators: a first group of 1 to 3 digits not starting
 * with 0, and exactly three digits after every comma; "0,707" stays a decimal comma). */
export function parseNumber(text) {
  let t = text.trim().replace(/^−/, "-");
  if (/^[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?$/.test(t)) t = t.replaceAll(",", "");
  else t = t.replace(/^([-+]?\d*),(\d+)$/, "$1.$2");
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t) : null;
}

export class NumericExercise {
  constructor(root, data) {
    this.root = root;
    this.data = data;
    this.form = root.querySelector(".attn-exercise__form");
    this.result = root.querySelector(".attn-exercise__result");
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.check();
    });
    if (isSolved(data.id)) showSolved(root);
  }

  /** Nothing to let go of: its listeners are on its own form. */
  destroy() {}

  check() {
    const tol = this.data.tolerance;
    let right = 0,
      wrong = 0,
      empty = 0,
      unreadable = 0;
    for (const answer of this.data.answers) {
      const [rows, cols] = answer.shape;
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < cols; j++) {
          const input = this.form.elements[`${answer.name}-${i}-${j}`];
          const text = input.value;
          const x = parseNumber(text);
          let ok = false;
          if (!text.trim()) empty += 1;
          else if (x === null) unreadable += 1;
          else if (Math.abs(x - answer.values[i * cols + j]) <= tol + 1e-12) ok = true;
          else wrong += 1;
          if (ok) right += 1;
          input.setAttribute("aria-invalid", String(!ok && !!text.trim()));
          input.classList.toggle("attn-exercise__input--right", ok);
        }
      }
    }
    const total = right + wrong + empty + unreadable;
    this.root.dataset.result = right === total ? "right" : "wrong";
    if (right === total) {
      this.result.textContent = this.data.whole
        ? `Right: all ${total} values are exact. Solved!`
        : `Right: all ${total} values are within ±${tol} of the exact ones. Solved!`;
      markSolved(this.root, this.data.id);
      return;
    }
    // An example that fits the answers: whole numbers (with or without thousands commas)
    // where every answer is a whole number, a decimal otherwise.
    const whole = this.data.answers.every((a) => a.values.every((v) => Number.isInteger(v)));
    const example = whole ? "2048 or 2,048" : "0.25";
    const parts = [`${right} of ${total} values are right.`];
    if (wrong)
      parts.push(`${wrong} ${wrong === 1 ? "is" : "are"} off by more than ${tol} (marked).`);
    if (unreadable)
      parts.push(
        `${unreadable} ${unreadable === 1 ? "is not a number" : "are not numbers"} (write e.g. ${example}).`,
      );
    if (empty) parts.push(`${empty} ${empty === 1 ? "box is" : "boxes are"} empty.`);
    this.result.textContent = parts.join(" ");
  }
}

export class CodeExercise {
  constructor(root, data) {
    this.root = root;
    this.data = data;
    this.running = false;
    runtime.configure(data.runtime);
    root.attnExercise = this;
    const box = root.querySelector(".attn-exercise__code");
    const static_ = box.querySelector(".attn-cell__static");
    this.toolbar = el("div", "attn-cell__toolbar");
    this.checkButton = button(
      "Check",
      "attn-exercise__check",
      "Check your code against the hidden tests",
    );
    this.checkButton.setAttribute("aria-keyshortcuts", "Shift+Enter");
    this.checkButton.title = "Check (Shift+Enter)";
    this.stopButton = button("Stop", "attn-cell__stop", "Stop the checks");
    this.stopButton.disabled = true;
    this.resetButton = button("Reset", "attn-cell__reset", "Reset your code to the starting code");
    this.toolbar.append(
      el("span", "attn-cell__label", "Your code"),
      this.checkButton,
      this.stopButton,
      this.resetButton,
    );
    Object.assign(this, codeParts(static_, "Results of the hidden tests"));
    box.textContent = "";
    box.append(this.toolbar, this.editorBox, this.status, this.output);
    this.editor = new Editor(
      this.editorBox,
      data.starter,
      `Your code for the exercise ${data.id}`,
      () => this.check(),
    );
    this.checkButton.addEventListener("click", () => this.check());
    this.stopButton.addEventListener("click", async () => {
      this.stopButton.disabled = true;
      await runtime.stop();
    });
    this.resetButton.addEventListener("click", () => {
      this.editor.code = data.starter;
      this.editor.focus();
    });
    if (isSolved(data.id)) showSolved(root);
    root.dataset.checks = "0";
  }

  /** Let go of the editor, heatmaps and runtime listener (the page is going). */
  destroy() {
    destroyCode(this);
  }

  async check() {
    if (this.running) return;
    this.running = true;
    this.checkButton.disabled = true;
    clearOutput(this);
    this.status.textContent = waitingText();
    const onRuntime = () => {
      if (this.running && this.stopButton.disabled) this.status.textContent = waitingText();
    };
    this.onRuntime = onRuntime;
    runtime.addEventListener("change", onRuntime);
    let result = "error";
    try {
      // The checks see only the starter's names of the reader's code (cells.check_code).
      const spec = { checks: this.data.checks, names: this.data.names };
      const out = await runtime.checkCode(this.editor.code, spec, {
        onStart: () => {
          this.stopButton.disabled = false;
          this.status.textContent = "Running the hidden tests… (Stop ends them)";
        },
      });
      addOutputs(this, out.run.outputs);
      if (out.run.error) {
        this.output.append(
          el("pre", "attn-cell__error", out.run.interrupted ? "KeyboardInterrupt" : out.run.error),
        );
      }
      if (out.cases.length) {
        const list = el("ul", "attn-exercise__cases");
        for (const c of out.cases) {
          // A check that failed on its own (fault "check") is the check's problem, not a
          // mistake of the reader's: it is marked and counted apart.
          const kind = c.passed ? "pass" : c.fault === "check" ? "broken" : "fail";
          const mark = { pass: "✓ passed: ", fail: "✗ failed: ", broken: "⚠ check error: " };
          const item = el("li", `attn-exercise__case--${kind}`);
          item.append(
            el("span", "attn-exercise__mark", mark[kind]),
            document.createTextNode(c.name),
          );
          if (!c.passed) item.append(el("span", "attn-exercise__why", ` (${c.message})`));
          if (c.note) item.append(el("span", "attn-exercise__note", ` Note: ${c.note}`));
          list.append(item);
        }
        this.output.append(list);
      }
      const passed = out.cases.filter((c) => c.passed).length;
      const broken = out.cases.filter((c) => c.fault === "check").length;
      if (out.passed) {
        result = "passed";
        this.status.textContent = `All ${out.cases.length} hidden tests pass. Solved!`;
        markSolved(this.root, this.data.id);
      } else if (out.run.interrupted) {
        result = "stopped";
        this.status.textContent = "Stopped.";
      } else if (out.run.error) {
        this.status.textContent =
          "Your code raised an error before the tests could run (see below).";
      } else if (broken) {
        result = "check-error";
        const which =
          broken === 1 ? "1 test failed on its own" : `${broken} tests failed on their own`;
        this.status.textContent =
          `${passed} of ${out.cases.length} hidden tests pass; ${which} ` +
          "(marked ⚠): a problem of the check, not an error raised by your code.";
      } else {
        result = "failed";
        this.status.textContent = `${passed} of ${out.cases.length} hidden tests pass.`;
      }
    } catch (err) {
      result = err.restarted ? "stopped" : "error";
      this.status.textContent = err.restarted
        ? "Stopped: Python was restarted (the cells on this page lost their variables too)."
        : `Could not run the tests: ${err.message}. Press Check to try again.`;
    } finally {
      endRun(this, this.checkButton, onRuntime);
      this.root.dataset.result = result;
      this.root.dataset.checks = String(Number(this.root.dataset.checks) + 1);
      this.root.dispatchEvent(new CustomEvent("exercise:done", { detail: { result } }));
    }
  }
}

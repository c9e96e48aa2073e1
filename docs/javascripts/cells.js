// Editable Python cells and auto-checked exercises (placeholders from
// build_scripts/cell_fences.py), on the one shared Python worker of runtime.js.
//
// Cells on a page share one namespace; Stop interrupts Python (cross-origin isolated
// pages) or restarts the worker, and then says that the namespace was reset: nothing is
// re-run behind the reader's back. The editor is CodeMirror 6 (vendor/codemirror/),
// loaded only on pages that have cells; until then the code shows as plain text.
// Exercise progress lives in localStorage only.
(function () {
  "use strict";
  const { runtime, el, SITE_ROOT, onEveryPage, whenNear } = window.AttnLabs;
  const STORE = "attn-labs:solved:";
  let editorLib = null; // Promise of window.CM

  function loadEditor() {
    if (!editorLib) {
      editorLib = new Promise((resolve, reject) => {
        if (window.CM) return resolve(window.CM);
        const script = document.createElement("script");
        script.src = new URL("vendor/codemirror/codemirror.min.js", SITE_ROOT).href;
        script.onload = () => resolve(window.CM);
        script.onerror = () => reject(new Error("the code editor could not be loaded"));
        document.head.append(script);
      });
      editorLib.catch(() => {});
    }
    return editorLib;
  }

  /** A code editor in `parent` (CodeMirror; a textarea if it cannot load). */
  class Editor {
    constructor(parent, code, label, onRun) {
      this.parent = parent;
      this.initial = code;
      this.label = label;
      this.onRun = onRun;
      this.view = null;
      this.ready = loadEditor().then(
        (CM) => this._mountCodeMirror(CM, code),
        () => this._mountTextarea(code),
      );
    }

    _mountCodeMirror(CM, code) {
      const run = () => {
        this.onRun();
        return true; // handled: CodeMirror inserts no newline
      };
      this.parent.textContent = "";
      this.view = new CM.EditorView({
        parent: this.parent,
        state: CM.EditorState.create({
          doc: code,
          extensions: [
            CM.lineNumbers(),
            CM.EditorView.lineWrapping, // long lines wrap instead of hiding on a phone
            CM.history(),
            CM.drawSelection(),
            CM.indentUnit.of("    "),
            CM.indentOnInput(),
            CM.bracketMatching(),
            CM.closeBrackets(),
            CM.python(),
            CM.syntaxHighlighting(CM.classHighlighter),
            CM.Prec.highest(
              CM.keymap.of([
                { key: "Shift-Enter", run },
                { key: "Mod-Enter", run },
              ]),
            ),
            // Tab indents; Escape then Tab leaves the editor (CodeMirror's focus escape).
            CM.keymap.of([
              ...CM.closeBracketsKeymap,
              ...CM.defaultKeymap,
              ...CM.historyKeymap,
              CM.indentWithTab,
            ]),
            CM.EditorView.contentAttributes.of({
              "aria-label": `${this.label}. Shift+Enter runs it; Escape then Tab leaves the editor.`,
            }),
          ],
        }),
      });
    }

    _mountTextarea(code) {
      this.parent.textContent = "";
      this.textarea = el("textarea", "attn-cell__textarea");
      this.textarea.value = code;
      this.textarea.rows = Math.max(3, code.split("\n").length);
      this.textarea.setAttribute("aria-label", `${this.label}. Shift+Enter runs it.`);
      this.textarea.spellcheck = false;
      this.textarea.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && (e.shiftKey || e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          this.onRun();
        }
      });
      this.parent.append(this.textarea);
    }

    get code() {
      if (this.view) return this.view.state.doc.toString();
      if (this.textarea) return this.textarea.value;
      return this.initial;
    }

    set code(text) {
      if (this.view)
        this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: text } });
      else if (this.textarea) this.textarea.value = text;
    }

    focus() {
      if (this.view) this.view.focus();
      else if (this.textarea) this.textarea.focus();
    }
  }

  function button(text, className, label) {
    const b = el("button", `md-button attn-cell__button ${className}`, text);
    b.type = "button";
    if (label) b.setAttribute("aria-label", label);
    return b;
  }

  /** Draw a cell's output items (streams and heatmaps) into `box`. */
  function renderOutputs(box, items) {
    for (const item of items) {
      if (item.type === "stream") {
        const last = box.lastElementChild;
        if (last && last.dataset.stream === item.name) last.textContent += item.text;
        else {
          const pre = el("pre", `attn-cell__stream attn-cell__stream--${item.name}`, item.text);
          pre.dataset.stream = item.name;
          box.append(pre);
        }
      } else if (item.type === "heatmap") {
        const fig = el("figure", "attn-cell__figure");
        const title = item.title || "Attention heatmap";
        const map = new window.AttnLabs.Heatmap(fig, {
          label: `${title}: ${item.rows.length} queries × ${item.cols.length} keys`,
        });
        map.setData({ rowLabels: item.rows, colLabels: item.cols, values: item.values });
        fig.append(el("figcaption", "attn-cell__caption", title));
        box.append(fig, valuesTable(item, title));
      }
    }
  }

  /** The heatmap's text alternative: its values in a table, in a disclosure. */
  function valuesTable(item, title) {
    const details = el("details", "attn-lab__table");
    details.append(el("summary", "", `${title}: the weights as a table`));
    const scroll = el("div", "attn-lab__table-scroll");
    scroll.tabIndex = 0;
    scroll.setAttribute("role", "region");
    scroll.setAttribute("aria-label", `${title}: weights (rows are queries, columns are keys)`);
    const table = el("table");
    const head = el("tr");
    head.append(el("th", "", "query \\ key"));
    for (const c of item.cols) head.append(Object.assign(el("th", "", c), { scope: "col" }));
    table.append(el("thead"), el("tbody"));
    table.tHead.append(head);
    item.values.forEach((row, i) => {
      const tr = el("tr");
      tr.append(Object.assign(el("th", "", item.rows[i]), { scope: "row" }));
      for (const v of row) tr.append(el("td", "", v.toFixed(3)));
      table.tBodies[0].append(tr);
    });
    scroll.append(table);
    details.append(scroll);
    return details;
  }

  // Runtime messages shared by cells and code exercises.
  function waitingText() {
    const { state, progress } = runtime;
    if (state === "ready") return "Running…";
    if (state === "failed") return `${progress.message}.`;
    return `Waiting for Python: ${progress.message.toLowerCase()} (step ${progress.step} of ${progress.total})…`;
  }
  const RESET_TEXT =
    "Python was restarted to stop the code, so every variable of this page's cells is gone. " +
    "Nothing was re-run: run the cells you need again, from the top.";

  /** The editor box (holding the build's static code until the editor loads), a status
   * line and a hidden, live output area named `outputLabel`: shared by cells and code
   * exercises. */
  function codeParts(static_, outputLabel) {
    const editorBox = el("div", "attn-cell__editor");
    if (static_) editorBox.append(static_);
    const status = el("p", "attn-cell__status");
    status.setAttribute("role", "status");
    const output = el("div", "attn-cell__output");
    output.setAttribute("aria-live", "polite");
    output.setAttribute("aria-label", outputLabel);
    output.hidden = true;
    return { editorBox, status, output };
  }

  /** What ends every Run and Check, however it went: the runtime listener goes, the
   * output shows if there is any, `mainButton` (Run or Check) is back and Stop is off. */
  function endRun(widget, mainButton, onRuntime) {
    runtime.removeEventListener("change", onRuntime);
    widget.output.hidden = !widget.output.childElementCount;
    widget.running = false;
    mainButton.disabled = false;
    widget.stopButton.disabled = true;
  }

  class CellController {
    constructor(root, data, page) {
      this.root = root;
      this.n = data.n;
      this.page = page;
      this.runs = 0;
      this.running = false;
      runtime.config = runtime.config || data.runtime;
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
      this.output.textContent = "";
      this.output.hidden = true;
      this.status.textContent = waitingText();
      const onRuntime = () => {
        if (this.running && !this.started) this.status.textContent = waitingText();
      };
      runtime.addEventListener("change", onRuntime);
      this.started = false;
      const t0 = performance.now();
      let state = "done";
      try {
        const out = await runtime.runCell(this.page, this.editor.code, `<cell ${this.n}>`, {
          onStart: () => {
            this.started = true;
            this.stopButton.disabled = false;
            this.status.textContent = "Running… (Stop ends it)";
          },
          onOutput: (items) => {
            this.output.hidden = false;
            renderOutputs(this.output, items);
          },
        });
        const ms = performance.now() - t0;
        renderOutputs(this.output, out.outputs);
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
          this.status.textContent = `Ran in ${ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`}.`;
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

    /** Python was restarted (by any cell's Stop or a Retry): this page's variables are gone. */
    onRestart() {
      if (!this.running && this.runs > 0) {
        this.status.textContent =
          "Python was restarted: this cell's variables are gone. Run it again if you need them.";
        this.root.dataset.state = "reset";
      }
    }
  }

  // ----------------------------------------------------------------------------------
  // exercises

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

  /** Parse a typed number: "0.25", "-1", ".5", "2,5" (decimal comma), "1e-3". */
  function parseNumber(text) {
    const t = text
      .trim()
      .replace(/^−/, "-")
      .replace(/^([-+]?\d*),(\d+)$/, "$1.$2");
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t) : null;
  }

  class NumericExercise {
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
        this.result.textContent = `Right: all ${total} values are within ±${tol} of the exact ones. Solved!`;
        markSolved(this.root, this.data.id);
        return;
      }
      const parts = [`${right} of ${total} values are right.`];
      if (wrong)
        parts.push(`${wrong} ${wrong === 1 ? "is" : "are"} off by more than ${tol} (marked).`);
      if (unreadable)
        parts.push(
          `${unreadable} ${unreadable === 1 ? "is not a number" : "are not numbers"} (write e.g. 0.25).`,
        );
      if (empty) parts.push(`${empty} ${empty === 1 ? "box is" : "boxes are"} empty.`);
      this.result.textContent = parts.join(" ");
    }
  }

  class CodeExercise {
    constructor(root, data) {
      this.root = root;
      this.data = data;
      this.running = false;
      runtime.config = runtime.config || data.runtime;
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
      this.resetButton = button(
        "Reset",
        "attn-cell__reset",
        "Reset your code to the starting code",
      );
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

    async check() {
      if (this.running) return;
      this.running = true;
      this.checkButton.disabled = true;
      this.output.textContent = "";
      this.output.hidden = true;
      this.status.textContent = waitingText();
      const onRuntime = () => {
        if (this.running && this.stopButton.disabled) this.status.textContent = waitingText();
      };
      runtime.addEventListener("change", onRuntime);
      let result = "error";
      try {
        const out = await runtime.checkCode(this.editor.code, this.data.checks, {
          onStart: () => {
            this.stopButton.disabled = false;
            this.status.textContent = "Running the hidden tests… (Stop ends them)";
          },
        });
        renderOutputs(this.output, out.run.outputs);
        if (out.run.error) {
          this.output.append(
            el(
              "pre",
              "attn-cell__error",
              out.run.interrupted ? "KeyboardInterrupt" : out.run.error,
            ),
          );
        }
        if (out.cases.length) {
          const list = el("ul", "attn-exercise__cases");
          for (const c of out.cases) {
            const item = el(
              "li",
              c.passed ? "attn-exercise__case--pass" : "attn-exercise__case--fail",
            );
            item.append(
              el("span", "attn-exercise__mark", c.passed ? "✓ passed: " : "✗ failed: "),
              document.createTextNode(c.name),
            );
            if (!c.passed) item.append(el("span", "attn-exercise__why", ` (${c.message})`));
            list.append(item);
          }
          this.output.append(list);
        }
        const passed = out.cases.filter((c) => c.passed).length;
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

  // ----------------------------------------------------------------------------------

  let cells = [];
  let views = 0;
  function onRestart(event) {
    for (const cell of cells) cell.onRestart(event.detail.reason);
  }
  runtime.addEventListener("restart", onRestart);

  function mountAll() {
    cells = cells.filter((c) => document.contains(c.root));
    const fresh = document.querySelectorAll(".attn-cell:not([data-state])");
    if (fresh.length) {
      // A new view of a page starts with an empty namespace, like a fresh notebook.
      const page = `${location.pathname}#${++views}`;
      runtime.forgetNamespaces(page);
      for (const root of fresh) {
        try {
          cells.push(new CellController(root, JSON.parse(root.dataset.cellConfig), page));
        } catch (err) {
          root.textContent = `This cell could not be set up (${err.message}); rebuild the site.`;
        }
      }
    }
    for (const root of document.querySelectorAll(".attn-exercise:not([data-mounted])")) {
      root.dataset.mounted = "true";
      try {
        const data = JSON.parse(root.dataset.cellConfig);
        if (data.kind === "numeric") new NumericExercise(root, data);
        else new CodeExercise(root, data);
      } catch (err) {
        root.append(
          el("p", "attn-lab__error", `This exercise could not be set up (${err.message}).`),
        );
      }
    }
  }
  // Python starts when a cell or code exercise comes within half a screen of view, so
  // it is usually ready by the first Run; the editor script loads at the same time.
  let near = null;
  function observe() {
    near?.disconnect();
    near = whenNear(document.querySelectorAll(".attn-cell, .attn-exercise[data-kind=code]"), () =>
      runtime.start(),
    );
  }
  window.AttnLabs.cells = { parseNumber, loadEditor };
  onEveryPage(observe);
  onEveryPage(mountAll);
})();

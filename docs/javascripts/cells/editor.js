// The code editor of cells and code exercises: CodeMirror 6, a vendored bundle that sets
// the global `CM` (vendor/codemirror/), loaded only when a page has a cell or exercise;
// until then, or if it cannot load, the code shows as the build's plain text, then as a
// textarea.
import { loadScript } from "../runtime/site.js";
import { el } from "../ui/dom.js";

let wanted = null; // resolves when requestEditor() is first called
let release = null;

/** Promise of the CodeMirror bundle's exports (window.CM), loaded once. */
export function loadEditor() {
  const loaded = loadScript(
    "vendor/codemirror/codemirror.min.js",
    () => window.CM,
    "the code editor",
  );
  loaded.catch(() => {});
  return loaded;
}

/** Load the editor now: a cell or exercise came near the viewport (cells/index.js). The
 * bundle (about 125 kB gzip) is the largest file a lesson sends, so a reader who never
 * scrolls to a cell does not download it. */
export function requestEditor() {
  editorWanted();
  release();
}

function editorWanted() {
  if (!wanted) wanted = new Promise((resolve) => (release = resolve)).then(loadEditor);
  return wanted;
}

export class Editor {
  constructor(parent, code, label, onRun) {
    this.parent = parent;
    this.initial = code;
    this.label = label;
    this.onRun = onRun;
    this.view = null;
    this.destroyed = false;
    this.ready = editorWanted().then(
      (CM) => this.destroyed || this._mountCodeMirror(CM, this.initial),
      () => this.destroyed || this._mountTextarea(this.initial),
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
    else this.initial = text; // shown when the editor mounts
  }

  focus() {
    if (this.view) this.view.focus();
    else if (this.textarea) this.textarea.focus();
  }

  /** Destroy the CodeMirror view (its document and window listeners go with it); an
   * editor whose library is still loading is never mounted. Safe to call twice. */
  destroy() {
    this.destroyed = true;
    this.view?.destroy();
    this.view = null;
  }
}

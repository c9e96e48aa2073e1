// The parts of CodeMirror 6 the code cells use, bundled into one script that sets
// window.CM (see build_scripts/vendor.py; docs/javascripts/cells.js uses it).
export { EditorState, Prec } from "@codemirror/state";
export { EditorView, keymap, lineNumbers, drawSelection, highlightActiveLine, placeholder } from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { bracketMatching, indentOnInput, syntaxHighlighting, indentUnit } from "@codemirror/language";
export { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
export { classHighlighter } from "@lezer/highlight";
export { python } from "@codemirror/lang-python";

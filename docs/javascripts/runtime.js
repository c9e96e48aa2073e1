// One shared Python runtime (Pyodide in a Web Worker) for every lab on the site.
//
// Nothing is downloaded until a lab asks: `start()` is called when a lab scrolls into
// view or a reader touches a control. Calls made before Python is ready are posted at
// once; the worker holds them until it is ready, so none is lost.
(function () {
  "use strict";

  // This file is served from <site>/javascripts/, so the site root is one level up;
  // this works on any host and under any path prefix.
  const SITE_ROOT = new URL("../", document.currentScript.src).href;
  const STARTUP_TIMEOUT_S = 120; // generous: 9 MB (gzip) on a slow connection

  class LabRuntime extends EventTarget {
    constructor() {
      super();
      this.worker = null;
      this.state = "idle"; // idle | loading | ready | failed
      this.progress = { step: 0, total: 5, message: "Python not started" };
      this.error = null;
      this.pending = new Map(); // request id -> {resolve, reject}
      this.nextId = 1;
      this.config = null; // {wheel, pyodide, pyodide_index_url} from build_scripts/lab_fences.py
      this.timings = {};
    }

    /** Start the worker if it is not running; `this.config` is set by the first lab. */
    start() {
      if (this.worker) return;
      const cfg = this.config || {};
      const indexURL =
        cfg.pyodide_index_url || new URL(cfg.pyodide || "vendor/pyodide/", SITE_ROOT).href;
      this.timings = { start: performance.now() };
      this.worker = new Worker(new URL("javascripts/pyodide-worker.js", SITE_ROOT));
      this.worker.onmessage = (event) => this._onMessage(event.data);
      this.worker.onerror = (event) =>
        this._fail(`the Python worker crashed: ${event.message || "unknown error"}`);
      this._setState("loading", { step: 1, total: 5, message: "Downloading Python" });
      // A host that never answers must not leave the reader at "loading" for ever.
      clearTimeout(this.watchdog);
      this.watchdog = setTimeout(() => {
        if (this.state === "loading") this._fail(`no answer after ${STARTUP_TIMEOUT_S} s`);
      }, STARTUP_TIMEOUT_S * 1000);
      this.worker.postMessage({
        type: "init",
        indexURL,
        wheelURL: new URL(cfg.wheel, SITE_ROOT).href,
      });
    }

    /** Run lab `lab` with `params`; resolves with the worker's parsed JSON answer. */
    run(lab, params) {
      this.start();
      const id = this.nextId++;
      return new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker.postMessage({ type: "run", id, lab, params: JSON.stringify(params) });
      });
    }

    /** Throw the worker away (stuck or failed) and start a fresh one. */
    restart() {
      if (this.worker) this.worker.terminate();
      this.worker = null;
      for (const { reject } of this.pending.values()) reject(new Error("Python was restarted"));
      this.pending.clear();
      this.error = null;
      this.state = "idle";
      this.start();
    }

    _onMessage(msg) {
      if (msg.at)
        this.timings[`step${msg.type === "ready" ? 5 : msg.step}`] =
          msg.at - performance.timeOrigin;
      if (msg.type === "progress") {
        this._setState("loading", msg);
      } else if (msg.type === "ready") {
        this.timings.ready = performance.now();
        clearTimeout(this.watchdog);
        this._setState("ready", { step: 5, total: 5, message: "Python is ready" });
      } else if (msg.type === "init-error") {
        this._fail(msg.error);
      } else if (msg.type === "result") {
        const waiter = this.pending.get(msg.id);
        if (!waiter) return;
        this.pending.delete(msg.id);
        if (msg.json !== undefined) {
          const out = JSON.parse(msg.json, unpackArrays);
          out.compute_ms = msg.compute_ms;
          waiter.resolve(out);
        } else {
          waiter.reject(new Error(msg.error));
        }
      }
    }

    _fail(message) {
      this.error = message;
      clearTimeout(this.watchdog);
      if (this.worker) this.worker.terminate(); // a half-started worker is of no use
      this.worker = null;
      this._setState("failed", {
        step: 0,
        total: 5,
        message: `Python could not start: ${message}`,
      });
      for (const { reject } of this.pending.values()) reject(new Error(this.progress.message));
      this.pending.clear();
    }

    _setState(state, progress) {
      this.state = state;
      this.progress = { step: progress.step, total: progress.total, message: progress.message };
      this.dispatchEvent(new CustomEvent("change", { detail: { state, progress: this.progress } }));
    }
  }

  /**
   * JSON.parse reviver for float arrays packed by labs_py (attention_labs.labs._packed):
   * {"__ndarray__": base64 float64 little-endian, "shape": [...]} becomes a Float64Array
   * (1-D) or nested arrays of Float64Array rows, so `weights[q][k]` reads as usual.
   * Masked entries arrive as -Infinity.
   */
  function unpackArrays(_key, value) {
    if (!value || typeof value !== "object" || typeof value.__ndarray__ !== "string") return value;
    const bytes = Uint8Array.fromBase64
      ? Uint8Array.fromBase64(value.__ndarray__)
      : Uint8Array.from(atob(value.__ndarray__), (c) => c.charCodeAt(0));
    const flat = new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
    const split = (data, shape) => {
      if (shape.length <= 1) return data;
      const size = data.length / shape[0];
      return Array.from({ length: shape[0] }, (_, i) =>
        split(data.subarray(i * size, (i + 1) * size), shape.slice(1)),
      );
    };
    return split(flat, value.shape);
  }

  /** document.createElement with a class and text (text, never HTML). */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text) node.textContent = text;
    return node;
  }

  window.AttnLabs = window.AttnLabs || { widgets: {} };
  window.AttnLabs.SITE_ROOT = SITE_ROOT;
  window.AttnLabs.el = el;
  window.AttnLabs.runtime = new LabRuntime();
})();

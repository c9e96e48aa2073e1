// One shared Python runtime (Pyodide in a Web Worker) for every lab, cell and exercise.
//
// Nothing is downloaded until a component asks: a page with labs calls `start()` as it
// opens (its head's script, hooks/preload.py), cells and maps when they come near the
// viewport or a reader touches a control. Calls made before Python is ready are posted at
// once; the worker holds them until it is ready, so none is lost.
// The one instance, `runtime`, outlives page changes (instant navigation keeps it).
import { SITE_ROOT } from "./site.js";

const STARTUP_TIMEOUT_S = 120; // generous: 9 MB (gzip) on a slow connection
// After Stop, how long Python may take to raise KeyboardInterrupt before the worker is
// thrown away instead (C code such as a long NumPy call does not look at the buffer).
// It usually takes ~20 ms (make bench); a busy machine can stall the worker for a second.
const INTERRUPT_GRACE_MS = 3000;
// Python zeroes the buffer when it reads the interrupt. If it is zero and the request still
// runs after this long, the KeyboardInterrupt was raised where Python drops exceptions (a
// finalizer or weakref callback: pyodide#6082) or the code caught it: Stop sends it again.
const INTERRUPT_RESEND_MS = 250;

export class LabRuntime extends EventTarget {
  constructor() {
    super();
    this.worker = null;
    this.state = "idle"; // idle | loading | ready | failed
    this.progress = { step: 0, total: 5, message: "Python not started" };
    this.error = null;
    this.pending = new Map(); // request id -> {resolve, reject}
    this.nextId = 1;
    this.config = null; // {wheel, pyodide, pyodide_index_url, stdlib, ...}: hooks/runtime.py
    this.timings = {};
    this.running = null; // id of the request Python is working on now
    this.interruptBuffer = null; // set when the page is cross-origin isolated
    this.warmLab = null; // a lab the worker runs once at start-up (see configure)
    this.interruptGraceMs = INTERRUPT_GRACE_MS;
  }

  /**
   * Take the build's runtime config ({wheel, pyodide, pyodide_index_url}) from the first
   * component that has one, and remember the first lab's name: the worker runs that lab
   * once while starting, so the reader's first change is fast (any lab, by name).
   */
  configure(config, lab) {
    this.config = this.config || config || null;
    if (lab) this.warmLab = this.warmLab || lab;
  }

  /**
   * Start Python ahead of use (a component came near view), unless it has failed: then
   * only the reader's Retry or action starts it again, so a broken host is not asked
   * again on every scroll and the Retry button stays where the reader saw it.
   */
  preload() {
    if (this.state !== "failed") this.start();
  }

  /**
   * Resolves with the state once Python's start-up is over: failed, or ready with its
   * idle warm-up done and no request waiting (the reader's first change drawn first); at
   * once where Python is not starting (a page without labs). Work that would compete with
   * the start-up for the CPU (KaTeX, Material's search index) waits for this.
   */
  whenSettled() {
    return new Promise((resolve) => {
      const settled = () => {
        if (this.state === "loading") return false;
        const busy = this.timings.warm === undefined || this.pending.size > 0;
        if (this.state === "ready" && busy) return false;
        this.removeEventListener("change", settled);
        this.removeEventListener("quiet", settled);
        resolve(this.state);
        return true;
      };
      if (!settled()) {
        this.addEventListener("change", settled);
        this.addEventListener("quiet", settled);
      }
    });
  }

  /** The worker's init message for the configured runtime (what the head's start script
   * posts too, hooks/preload.py), without the interrupt buffer. */
  initMessage() {
    const cfg = this.config || {};
    const siteURL = (path) => (path ? new URL(path, SITE_ROOT).href : undefined);
    return {
      type: "init",
      indexURL: cfg.pyodide_index_url || new URL(cfg.pyodide || "vendor/pyodide/", SITE_ROOT).href,
      wheelURL: siteURL(cfg.wheel),
      labsURL: siteURL(cfg.labs),
      stdlibURL: siteURL(cfg.stdlib),
      stdlibMoreURL: siteURL(cfg.stdlib_more),
      lockFileURL: siteURL(cfg.lock_file),
      numpyURL: siteURL(cfg.numpy),
      expect: Object.fromEntries(
        Object.entries(cfg.expect || {}).map(([path, want]) => [siteURL(path), want]),
      ),
      warmLab: this.warmLab,
    };
  }

  /**
   * Start the worker if it is not running (`configure` has said where Python is). The
   * first start takes the worker that the head's script of a page with labs started
   * already (hooks/preload.py: ``self.attnStarted``), with the messages it has sent since.
   */
  start() {
    if (this.worker) return;
    const adopt = self.attnStarted?.taken === false ? self.attnStarted : null;
    if (adopt) adopt.taken = true;
    this.timings = { start: adopt ? adopt.start : performance.now() };
    // Stop can interrupt Python only through shared memory, which browsers give to
    // cross-origin isolated pages (COOP/COEP headers); elsewhere Stop restarts the worker.
    this.interruptBuffer = adopt
      ? adopt.interruptBuffer
      : self.crossOriginIsolated && typeof SharedArrayBuffer === "function"
        ? new Uint8Array(new SharedArrayBuffer(1))
        : null;
    const worker = adopt ? adopt.worker : new Worker(new URL("pyodide-worker.js", import.meta.url));
    this.worker = worker;
    // Events a replaced worker had already queued (a Stop) must not touch the new one.
    worker.onmessage = (event) => worker === this.worker && this._onMessage(event.data);
    worker.onerror = (event) => worker === this.worker && this._fail(workerError(event));
    this._setState("loading", { step: 1, total: 5, message: "Downloading Python" });
    // A host that never answers must not leave the reader at "loading" for ever.
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (this.state === "loading")
        this._fail(
          `no answer after ${STARTUP_TIMEOUT_S} s. Check your connection and press Retry.`,
        );
    }, STARTUP_TIMEOUT_S * 1000);
    if (adopt) {
      for (const message of adopt.messages.splice(0))
        if (worker === this.worker) this._onMessage(message);
      return;
    }
    this.worker.postMessage({ ...this.initMessage(), interruptBuffer: this.interruptBuffer });
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

  /**
   * Run map source `source` (attention_labs.models.sources: a model on the reader's text)
   * with `params`; resolves with the worker's parsed JSON answer, as `run` does.
   */
  runSource(source, params) {
    return this._request({ type: "source", source, params: JSON.stringify(params) });
  }

  /**
   * Run a code cell in the namespace `page`; `onOutput(items)` gets output while it
   * runs and `onStart()` is called when Python begins it. Resolves with
   * {outputs, value, error, interrupted} (attention_labs.cells.run_cell).
   */
  runCell(page, code, name, { onOutput, onStart } = {}) {
    return this._request({ type: "cell", page, code, name }, { onOutput, onStart });
  }

  /** Run a code exercise's hidden checks on `code`; resolves with check_code's dict. */
  checkCode(code, checks, { onStart } = {}) {
    return this._request({ type: "check", code, checks: JSON.stringify(checks) }, { onStart });
  }

  /** Drop the namespaces of pages other than `keep` (if Python is running at all). */
  forgetNamespaces(keep) {
    if (this.worker) this.worker.postMessage({ type: "forget", keep });
  }

  _request(message, { onOutput, onStart } = {}) {
    this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onOutput, onStart });
      this.worker.postMessage({ ...message, id });
    });
  }

  /**
   * Stop the request Python is running now. Cross-origin isolated: KeyboardInterrupt,
   * and the namespace survives ("interrupted"); otherwise, or if Python does not stop
   * within `interruptGraceMs`, the worker is replaced ("restarted") and every
   * namespace is gone. Resolves with what happened ("idle" if nothing was running).
   */
  async stop() {
    const id = this.running;
    if (id === null) return "idle";
    this.timings.stopAt = performance.now();
    if (this.interruptBuffer) {
      const buffer = this.interruptBuffer;
      buffer[0] = 2; // SIGINT
      const ended = await new Promise((resolve) => {
        const t0 = performance.now();
        let sent = t0;
        const poll = () => {
          const t = performance.now();
          if (!this.pending.has(id)) resolve(true);
          else if (t - t0 > this.interruptGraceMs) resolve(false);
          else {
            if (buffer[0] === 0 && t - sent > INTERRUPT_RESEND_MS) {
              buffer[0] = 2;
              sent = t;
            }
            setTimeout(poll, 20);
          }
        };
        poll();
      });
      if (ended) return "interrupted";
    }
    this.restart("stopped");
    return "restarted";
  }

  /** Throw the worker away (stuck, stopped or failed) and start a fresh one. */
  restart(reason = "retry") {
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.running = null;
    const message =
      reason === "stopped"
        ? "Python was restarted to stop the running code"
        : "Python was restarted";
    for (const { reject } of this.pending.values())
      reject(Object.assign(new Error(message), { restarted: true }));
    this.pending.clear();
    this.error = null;
    this.state = "idle";
    this.dispatchEvent(new CustomEvent("restart", { detail: { reason } }));
    this.start();
  }

  _onMessage(msg) {
    if (msg.at && (msg.type === "progress" || msg.type === "ready"))
      this.timings[`step${msg.type === "ready" ? 5 : msg.step}`] = msg.at - performance.timeOrigin;
    if (msg.type === "progress") {
      this._setState("loading", msg);
    } else if (msg.type === "ready") {
      this.timings.ready = performance.now();
      // Each step of the worker's start-up, and when each download ended: for make bench.
      this.timings.profile = onPageClock(msg.profile);
      this.timings.downloads = onPageClock(msg.downloads);
      clearTimeout(this.watchdog);
      this._setState("ready", { step: 5, total: 5, message: "Python is ready" });
    } else if (msg.type === "warm") {
      this.timings.warm = msg.at - performance.timeOrigin;
      this.timings.warmProfile = onPageClock(msg.profile);
      this.dispatchEvent(new Event("quiet")); // for whenSettled
    } else if (msg.type === "init-error") {
      this._fail(msg.error);
    } else if (msg.type === "worker-error") {
      this._fail(workerError(msg)); // the head's script kept its worker's error event
    } else if (msg.type === "started") {
      this.running = msg.id;
      const waiter = this.pending.get(msg.id);
      if (waiter?.onStart) waiter.onStart();
    } else if (msg.type === "output") {
      const waiter = this.pending.get(msg.id);
      if (waiter?.onOutput) waiter.onOutput(JSON.parse(msg.json));
    } else if (msg.type === "result") {
      if (this.running === msg.id) this.running = null;
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
      this.dispatchEvent(new Event("quiet")); // for whenSettled
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
 * What a worker's error event means for the reader. A script that did not load (a 404, a
 * network error) fires a bare Event, with no message: say which file, as the worker says
 * its own downloads' failures (HOST_HINT in pyodide-worker.js).
 */
export function workerError(event) {
  if (event.message) return `the Python worker crashed: ${event.message}`;
  return (
    "Python's worker (pyodide-worker.js) did not load. The site's copy of it is missing or " +
    "broken: reload the page later, and tell the site's maintainer if it stays."
  );
}

/** The worker's [[name, at (ms since the epoch)], ...] as [[name, ms on this page's clock]]. */
const onPageClock = (list) => (list || []).map(([name, at]) => [name, at - performance.timeOrigin]);

/**
 * JSON.parse reviver for float arrays packed by labs_py (attention_labs.calls.packed):
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

/** The one runtime of the site (the worker starts when a page with labs opens, or on first use). */
export const runtime = new LabRuntime();

// The lab controller: brings a lab placeholder (emitted by build_scripts/hooks/lab.py)
// or a lab made at run time to life, with the widget found from the lab's name.
//
// Each placeholder holds JSON with the lab name, its parameter schema, its parameters
// and the initial result the build computed, which is drawn at once. Python starts as
// the page opens; later results replace the drawing. The widget of lab <name> is
// the module labs/<name>.js, which exports mount(body, lab): adding a lab edits nothing
// here. main.js mounts the page's placeholders; a script can create a lab at run time:
//   const ctl = await mountLab(root, {lab, schema, params, initial: {result}, runtime});
//   ...
//   ctl.destroy(); // stops listening (runtime, observers); the elements stay until removed
// Every lab is tracked (runtime/page.js): the page change that removes it destroys it.
import { placeholderConfig, providedModule, track, whenNear } from "../runtime/page.js";
import { runtime } from "../runtime/lab-runtime.js";
import { el } from "../ui/dom.js";

const LAB_NAME = /^[a-z][a-z0-9_]*$/; // a module name in labs/, never a path
const widgets = new Map(); // name -> widget module, once imported

/**
 * The widget module of lab `name` (labs/<name>.js): the one the page's head provided
 * (runtime/page.js), else imported.
 * @returns {Promise<{mount(body: HTMLElement, lab: LabController): object}>}
 */
export async function loadWidget(name) {
  if (widgets.has(name)) return widgets.get(name); // no task's wait on a later page
  if (typeof name !== "string" || !LAB_NAME.test(name))
    throw new Error(`No widget for the lab ${JSON.stringify(name)}: not a lab name.`);
  let widget;
  try {
    widget = providedModule(name) || (await import(`./${name}.js`));
  } catch (err) {
    throw new Error(`No widget for the lab "${name}" (labs/${name}.js: ${err.message}).`);
  }
  if (typeof widget.mount !== "function")
    throw new Error(`No widget for the lab "${name}": labs/${name}.js exports no mount.`);
  widgets.set(name, widget);
  return widget;
}

export class LabController {
  /**
   * @param {HTMLElement} root the lab's element (emptied and filled)
   * @param {{lab: string, schema: object[], params: object, initial: {result: object},
   *   runtime: object, info?: object}} data what a placeholder holds
   * @param {{mount: Function}} widget the lab's widget module (loadWidget)
   */
  constructor(root, data, widget) {
    this.root = root;
    this.lab = data.lab;
    this.schema = data.schema;
    this.params = { ...data.params };
    this.info = data.info || null; // optional, for the widget (e.g. which real head)
    this.result = data.initial.result;
    this.runs = 0;
    this.latest = null; // params waiting to be sent (only the newest is kept)
    this.inFlight = false;
    runtime.configure(data.runtime, this.lab);
    root.textContent = "";
    root.attnLab = this;

    this.body = el("div", "attn-lab__body");
    this.status = el("div", "attn-lab__status");
    this.statusText = el("span", "attn-lab__status-text");
    this.statusText.setAttribute("role", "status");
    this.bar = el("progress", "attn-lab__progress");
    this.bar.setAttribute("aria-label", "Loading Python");
    this.retry = el("button", "md-button attn-lab__retry", "Retry");
    this.retry.type = "button";
    this.retry.hidden = true;
    this.retry.addEventListener("click", () => runtime.restart());
    this.status.append(this.bar, this.statusText, this.retry);
    this.error = el("p", "attn-lab__error");
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    root.append(this.body, this.error, this.status);

    this.widget = widget.mount(this.body, this);
    LabController.count = (LabController.count || 0) + 1;
    this.error.id = `${this.lab}-error-${LabController.count}`;
    if (this.widget.controls) this.widget.controls.after(this.error);
    this.widget.render(this.result);
    this._setStatus("initial");
    performance.mark("lab:initial"); // read by build_scripts/bench/bench.py

    this.onRuntime = () => {
      this._showRuntime();
      if (runtime.state === "ready" && this.resendWhenReady) {
        this.resendWhenReady = false;
        this.update({});
      }
    };
    runtime.addEventListener("change", this.onRuntime);
    this._showRuntime();
    // A lab made at run time (mountLab: the explorer's recompute) starts Python as it comes
    // into view (from half a screen before it); a page's placeholders start it at once.
    this.observer = whenNear([root], () => runtime.preload());
  }

  /** Ask for a recompute with `changes` merged into the parameters. */
  update(changes) {
    this.params = { ...this.params, ...changes };
    this.latest = { ...this.params };
    this.showError(null);
    this._pump();
  }

  async _pump() {
    if (this.inFlight || !this.latest) return;
    const params = this.latest;
    this.latest = null;
    this.inFlight = true;
    this._setStatus(runtime.state === "ready" ? "computing" : "queued");
    try {
      const t0 = performance.now();
      const out = await runtime.run(this.lab, params);
      if (this.destroyed) return;
      if (out.ok) {
        this.result = out.result;
        this.runs += 1;
        this.lastLatencyMs = performance.now() - t0;
        this.lastComputeMs = out.compute_ms;
        this.widget.render(out.result);
        this._setStatus("live");
        if (this.runs === 1) performance.mark("lab:first-recompute");
      } else {
        this.showError(out.error, out.param);
        this._setStatus("error");
      }
    } catch (err) {
      if (this.destroyed) return;
      this.showError(err.message);
      this._setStatus("error");
      // Python failed to start: send the reader's change again once it is back.
      if (runtime.state !== "ready") this.resendWhenReady = true;
    } finally {
      this.inFlight = false;
      this.root.dataset.runs = String(this.runs);
      this.root.dispatchEvent(new CustomEvent("lab:done", { detail: { runs: this.runs } }));
    }
    this._pump();
  }

  /** Show `message` under the lab (null hides it); the drawing stays as it was. */
  showError(message, param) {
    // update() clears the error on every change: nothing to do when none is shown
    if (!message && this.error.hidden && !this.markedInvalid) return;
    this.error.hidden = !message;
    this.error.textContent = message || "";
    if (message) this._setStatus("error");
    this.markedInvalid = Boolean(message);
    this.widget.markInvalid?.(message ? param : null, this.error.id);
  }

  _setStatus(status) {
    if (this.root.dataset.status !== status) this.root.dataset.status = status;
    this._showRuntime();
  }

  _showRuntime() {
    const { state, progress } = runtime;
    const queued = this.root.dataset.status === "queued";
    let text = progress.message;
    if (state === "idle")
      text = "Showing a precomputed result; Python starts when you use the lab.";
    else if (state === "loading")
      text = `${progress.message}… (step ${progress.step} of ${progress.total})${queued ? " Your change will run as soon as Python is ready." : ""}`;
    else if (state === "failed")
      // The message says what failed and what to do (worker, runtime); a bare one gets both.
      text = /[.!]$/.test(progress.message)
        ? `${progress.message} The picture above is the precomputed one; press Retry.`
        : `${progress.message}. The picture above is the precomputed one; check your connection and press Retry.`;
    else if (state === "ready" && this.root.dataset.status === "error")
      text = "Showing the last valid result: correct the value above to recompute.";
    else if (state === "ready")
      text = this.runs
        ? "Live: computed in your browser by Python."
        : "Python is ready: move a control to recompute.";
    // Every recompute passes here twice (computing, then live) with the same text: only a
    // change is written, so the status line is not laid out and painted again for nothing.
    if (this.statusText.textContent !== text) this.statusText.textContent = text;
    const loading = state === "loading";
    if (this.bar.hidden === loading) this.bar.hidden = !loading;
    if (this.bar.max !== progress.total) this.bar.max = progress.total;
    if (this.bar.value !== progress.step) this.bar.value = progress.step;
    this.retry.hidden = state !== "failed";
    if (this.root.dataset.runtime !== state) this.root.dataset.runtime = state;
  }

  /** Stop listening to the runtime, the viewport and the palette (safe to call twice). */
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    this.latest = null;
    runtime.removeEventListener("change", this.onRuntime);
    this.observer.disconnect();
    this.widget.destroy?.();
  }
}

/**
 * Create a lab in `root` now (not from a build-time placeholder). `data` is what a
 * placeholder holds: {lab, schema, params, initial: {result}, runtime}. Resolves with
 * the LabController, which is destroyed when a page change removes `root` (or call its
 * destroy() before dropping or reusing `root`).
 */
export async function mountLab(root, data) {
  const widget = await loadWidget(data?.lab);
  const hadClass = root.classList.contains("attn-lab");
  root.classList.add("attn-lab"); // the lab styles, before the widget measures itself
  let controller;
  try {
    controller = new LabController(root, data, widget);
  } catch (err) {
    if (!hadClass) root.classList.remove("attn-lab");
    throw err;
  }
  return track(controller);
}

const claimed = new WeakSet(); // placeholders being mounted (their widget is loading)

/** Mount every lab placeholder of the page not mounted yet; resolves when all are drawn. */
export function mountLabs() {
  const roots = [...document.querySelectorAll(".attn-lab:not([data-status])")];
  return Promise.all(
    roots
      .filter((root) => !claimed.has(root))
      .map(async (root) => {
        claimed.add(root);
        const data = placeholderConfig(root, "This lab's data is damaged; rebuild the site.");
        if (!data) return;
        // A page with labs starts Python at once, wherever they are (the head's script does
        // it on a first visit, hooks/preload.py; this, on a page reached by instant navigation).
        runtime.configure(data.runtime, data.lab);
        runtime.preload();
        try {
          const widget = await loadWidget(data.lab);
          if (!root.isConnected) return; // the reader left the page meanwhile
          track(new LabController(root, data, widget));
        } catch (err) {
          root.textContent = err.message;
        }
      }),
  );
}

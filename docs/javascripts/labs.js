// Finds lab placeholders (emitted by build_scripts/lab_fences.py) and brings them to life.
//
// Each placeholder holds JSON with the lab name, its parameter schema, its parameters
// and the initial result the build computed, which is drawn at once. Python starts when
// a lab comes into view; later results replace the drawing. Runs again on every page
// change under Material's instant navigation (document$).
//
// A page script can also create a lab at run time:
//   const ctl = AttnLabs.mountLab(root, {lab, schema, params, initial: {result}, runtime});
//   ...
//   ctl.destroy(); // stops listening (runtime, observers); the elements stay until removed
(function () {
  "use strict";
  const { runtime, widgets, el, onEveryPage, pruneDetached, placeholderConfig, whenNear } =
    window.AttnLabs;

  class LabController {
    constructor(root, data) {
      this.root = root;
      this.lab = data.lab;
      this.schema = data.schema;
      this.params = { ...data.params };
      this.info = data.info || null; // optional, for the widget (e.g. which real head)
      this.result = data.initial.result;
      this.runs = 0;
      this.latest = null; // params waiting to be sent (only the newest is kept)
      this.inFlight = false;
      runtime.config = runtime.config || data.runtime;
      root.textContent = "";
      root.attnLab = this;

      this.body = el("div", "attn-lab__body");
      this.status = el("div", "attn-lab__status");
      this.statusText = el("span", "attn-lab__status-text");
      this.statusText.setAttribute("role", "status");
      this.bar = el("progress", "attn-lab__progress");
      this.retry = el("button", "md-button attn-lab__retry", "Retry");
      this.retry.type = "button";
      this.retry.hidden = true;
      this.retry.addEventListener("click", () => runtime.restart());
      this.status.append(this.bar, this.statusText, this.retry);
      this.error = el("p", "attn-lab__error");
      this.error.setAttribute("role", "alert");
      this.error.hidden = true;
      root.append(this.body, this.error, this.status);

      this.widget = widgets[this.lab].mount(this.body, this);
      LabController.count = (LabController.count || 0) + 1;
      this.error.id = `${this.lab}-error-${LabController.count}`;
      if (this.widget.controls) this.widget.controls.after(this.error);
      this.widget.render(this.result);
      this._setStatus("initial");
      performance.mark("lab:initial"); // read by build_scripts/bench.py

      this.onRuntime = () => {
        this._showRuntime();
        if (runtime.state === "ready" && this.resendWhenReady) {
          this.resendWhenReady = false;
          this.update({});
        }
      };
      runtime.addEventListener("change", this.onRuntime);
      this._showRuntime();
      // Start Python as the lab comes into view (from half a screen before it), so it is
      // ready soon after a reader reaches it; a reader who never gets there loads nothing.
      this.observer = whenNear([root], () => runtime.start());
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
      this.error.hidden = !message;
      this.error.textContent = message || "";
      if (message) this._setStatus("error");
      this.widget.markInvalid?.(message ? param : null, this.error.id);
    }

    _setStatus(status) {
      this.root.dataset.status = status;
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
        text = `${progress.message}. The picture above is the precomputed one; check your connection and press Retry.`;
      else if (state === "ready" && this.root.dataset.status === "error")
        text = "Showing the last valid result: correct the value above to recompute.";
      else if (state === "ready")
        text = this.runs
          ? "Live: computed in your browser by Python."
          : "Python is ready: move a control to recompute.";
      this.statusText.textContent = text;
      this.bar.hidden = state !== "loading";
      this.bar.max = progress.total;
      this.bar.value = progress.step;
      this.bar.setAttribute("aria-label", "Loading Python");
      this.retry.hidden = state !== "failed";
      this.root.dataset.runtime = state;
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

  let mounted = [];
  function mountAll() {
    // Instant navigation replaced the page: forget labs that left the document.
    mounted = pruneDetached(mounted);
    for (const root of document.querySelectorAll(".attn-lab:not([data-status])")) {
      const data = placeholderConfig(root, "This lab's data is damaged; rebuild the site.");
      if (!data) continue;
      if (!widgets[data.lab]) {
        root.textContent = `No widget is registered for the lab "${data.lab}".`;
        continue;
      }
      mounted.push(new LabController(root, data));
    }
  }

  /**
   * Create a lab in `root` now (not from a build-time placeholder). `data` is what a
   * placeholder holds: {lab, schema, params, initial: {result}, runtime}. Returns the
   * LabController; call its destroy() before dropping or reusing `root`. mountAll never
   * mounts it again: the controller marks `root` with data-status.
   */
  function mountLab(root, data) {
    if (!data || !widgets[data.lab])
      throw new Error(`No widget is registered for the lab "${data?.lab}".`);
    const hadClass = root.classList.contains("attn-lab");
    root.classList.add("attn-lab"); // the lab styles, before the widget measures itself
    let controller;
    try {
      controller = new LabController(root, data);
    } catch (err) {
      if (!hadClass) root.classList.remove("attn-lab"); // else mountAll would retry it
      throw err;
    }
    mounted.push(controller); // destroyed by mountAll once instant navigation removes it
    return controller;
  }
  window.AttnLabs.mountLab = mountLab;
  // The precomputed results are drawn at once, not after DOMContentLoaded.
  onEveryPage(mountAll);
})();

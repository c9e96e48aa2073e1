// Starts Python's worker (runtime/pyodide-worker.js) as soon as the parser reaches the top
// of a lab page's head. build_scripts/hooks/preload.py inlines this file there, after a data
// block (<script type="application/json" id="attn-start">) with the worker's address and its
// init message, both relative to the page.
//
// Why a classic script: an async module, even with its imports preloaded, ran only after the
// page's first style and layout (a trace of lesson 3: new Worker at 434 ms from navigation,
// 216 ms from this script), so Python's downloads and compile would follow the page instead of
// overlapping its parse. The runtime's module takes this worker later (LabRuntime.start reads
// self.attnStarted); until then the worker's messages are kept here in order.
{
  const start = performance.now();
  const data = JSON.parse(document.getElementById("attn-start").textContent);
  // The hook writes addresses relative to the page; the worker resolves them against its own.
  const at = (path) => path && new URL(path, location.href).href;
  const message = data.message;
  for (const key of [
    "indexURL",
    "wheelURL",
    "labsURL",
    "stdlibURL",
    "stdlibMoreURL",
    "lockFileURL",
    "numpyURL",
  ]) {
    message[key] = at(message[key]);
  }
  const expect = {};
  for (const path in message.expect) {
    expect[at(path)] = message.expect[path];
  }
  message.expect = expect;
  // Interrupting Python needs memory shared with the worker: only in a cross-origin
  // isolated page.
  message.interruptBuffer =
    self.crossOriginIsolated && typeof SharedArrayBuffer === "function"
      ? new Uint8Array(new SharedArrayBuffer(1))
      : null;
  const worker = new Worker(at(data.worker));
  const started = {
    worker,
    message,
    messages: [],
    start,
    interruptBuffer: message.interruptBuffer,
    taken: false,
  };
  worker.onmessage = (event) => {
    started.messages.push(event.data);
  };
  worker.onerror = (event) => {
    // Said by the runtime (lab-runtime.js workerError) when it takes this worker.
    started.messages.push({ type: "worker-error", message: event.message || "" });
  };
  worker.postMessage(message);
  self.attnStarted = started;
}

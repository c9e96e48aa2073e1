// The Python side of the labs: Pyodide + NumPy + the attention_labs wheel, in a worker so
// that loading and computing never freeze the page.
//
// Messages in:  {type: "init", indexURL, wheelURL, interruptBuffer?, warmLab?}
//               {type: "run", id, lab, params}        (params: a JSON string)
//               {type: "cell", id, page, code, name}  (a code cell, in page's namespace)
//               {type: "check", id, code, checks}     (a code exercise; checks: JSON)
//               {type: "forget", keep}                (drop other pages' namespaces)
// Messages out: {type: "progress", step, total, message} | {type: "ready"}
//               {type: "init-error", error}
//               {type: "started", id}                 (Python began work on request id)
//               {type: "output", id, json}            (a cell's output so far: JSON list)
//               {type: "result", id, json, compute_ms} | {type: "result", id, error}
"use strict";

const TOTAL_STEPS = 5; // 1 download, 2 start Python, 3 NumPy, 4 labs, 5 ready
let ready = null; // a Promise of the Python entry points once everything is loaded
let interruptBuffer = null; // SharedArrayBuffer view when the page is cross-origin isolated

// `at`: an absolute time (ms since the epoch), comparable with the page's clock.
const now = () => performance.timeOrigin + performance.now();

function progress(step, message) {
  self.postMessage({ type: "progress", step, total: TOTAL_STEPS, message, at: now() });
}

/** The message of an error; for a Python traceback, its last line (the exception). */
function lastLine(err) {
  const lines = String(err?.message || err)
    .trim()
    .split("\n");
  return lines[lines.length - 1];
}

async function fetchBytes(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not download ${what} (${url}: HTTP ${response.status})`);
  return response.arrayBuffer();
}

async function init({ indexURL, wheelURL, interruptBuffer: buffer, warmLab }) {
  // Start the labs wheel download now so that it overlaps Pyodide's start-up.
  const wheel = fetchBytes(wheelURL, "the labs package");
  wheel.catch(() => {}); // reported when awaited below
  try {
    importScripts(`${indexURL}pyodide.js`);
  } catch (err) {
    throw new Error(`could not load ${indexURL}pyodide.js (${err.message})`);
  }
  progress(2, "Starting Python");
  const pyodide = await loadPyodide({
    indexURL,
    lockFileURL: `${indexURL}pyodide-lock.json`,
    stdout: () => {},
    stderr: () => {},
  });
  // NumPy is loaded here rather than with loadPyodide's `packages` option: that option
  // saved no time in make bench, and when the download failed it sometimes never
  // settled, leaving the reader at "loading" forever.
  // Stop button: the page writes 2 (SIGINT) here and Python raises KeyboardInterrupt.
  if (buffer) {
    interruptBuffer = buffer;
    pyodide.setInterruptBuffer(buffer);
  }
  progress(3, "Loading NumPy");
  const reasons = [];
  await pyodide.loadPackage("numpy", {
    errorCallback: (m) => reasons.push(m),
    messageCallback: () => {},
  });
  if (!pyodide.loadedPackages.numpy) {
    const reason = reasons.join(" ").replace(/\s+/g, " ").slice(0, 240);
    throw new Error(`could not download NumPy from ${indexURL}${reason ? ` (${reason})` : ""}`);
  }
  progress(4, "Installing the labs");
  pyodide.unpackArchive(await wheel, "wheel");
  const runLabJson = pyodide.runPython(
    "import importlib; importlib.invalidate_caches()\n" +
      "from attention_labs.labs import run_lab_json\nrun_lab_json",
  );
  // Warm the code path so the first click is fast: the page's lab by name, or the first
  // registered lab (a page with cells only). Its defaults may be invalid (real_head needs
  // q and k): that answer is an {"ok": false}, and the path is warm all the same.
  const warm =
    warmLab || pyodide.runPython("from attention_labs.labs import LABS\nnext(iter(LABS))");
  runLabJson(warm, "{}");
  const cells = pyodide.pyimport("attention_labs.cells");
  // With an interrupt buffer, make time.sleep stoppable too (it sleeps in short slices).
  if (interruptBuffer)
    pyodide.runPython(
      "import time\nfrom attention_labs import cells\ntime.sleep = cells.interruptible_sleep",
    );
  return {
    run: runLabJson,
    cell: cells.run_cell_json,
    check: cells.check_code_json,
    forget: cells.forget_namespaces,
  };
}

/** The JSON answer of one request (cell, check or lab run). */
function call(py, msg) {
  if (msg.type === "cell") {
    const emit = (json) => self.postMessage({ type: "output", id: msg.id, json });
    return py.cell(msg.page, msg.code, msg.name, emit);
  }
  if (msg.type === "check") return py.check(msg.code, msg.checks, msg.name || "<exercise>");
  return py.run(msg.lab, msg.params);
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "init") {
    if (ready) return;
    ready = init(msg);
    ready.then(
      () => self.postMessage({ type: "ready", at: now() }),
      (err) => self.postMessage({ type: "init-error", error: lastLine(err) }),
    );
    return;
  }
  if (!["run", "cell", "check", "forget"].includes(msg.type)) return;
  let py;
  try {
    py = await ready;
  } catch (err) {
    if (msg.id)
      self.postMessage({
        type: "result",
        id: msg.id,
        error: `Python could not start: ${err.message}`,
      });
    return;
  }
  if (msg.type === "forget") {
    py.forget(msg.keep || "");
    return;
  }
  if (interruptBuffer) interruptBuffer[0] = 0; // a Stop meant for an earlier request
  self.postMessage({ type: "started", id: msg.id });
  const t0 = performance.now();
  try {
    const json = call(py, msg);
    self.postMessage({ type: "result", id: msg.id, json, compute_ms: performance.now() - t0 });
  } catch (err) {
    // A bug in a lab, not bad input (that comes back as {"ok": false}).
    self.postMessage({ type: "result", id: msg.id, error: lastLine(err) });
  }
};

// The Python side of the labs: Pyodide + NumPy + the attention_labs wheel, in a worker so
// that loading and computing never freeze the page.
//
// Messages in:  {type: "init", indexURL, wheelURL}
//               {type: "run", id, lab, params}        (params: a JSON string)
// Messages out: {type: "progress", step, total, message} | {type: "ready"}
//               {type: "init-error", error}
//               {type: "result", id, json, compute_ms} | {type: "result", id, error}
"use strict";

const TOTAL_STEPS = 5; // 1 download, 2 start Python, 3 NumPy, 4 labs, 5 ready
let ready = null; // a Promise of the run_lab_json function once everything is loaded

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

async function init({ indexURL, wheelURL }) {
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
  runLabJson("attention_pattern", "{}"); // warm the code path so the first click is fast
  return runLabJson;
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
  if (msg.type !== "run") return;
  let runLabJson;
  try {
    runLabJson = await ready;
  } catch (err) {
    self.postMessage({
      type: "result",
      id: msg.id,
      error: `Python could not start: ${err.message}`,
    });
    return;
  }
  const t0 = performance.now();
  try {
    const json = runLabJson(msg.lab, msg.params);
    self.postMessage({ type: "result", id: msg.id, json, compute_ms: performance.now() - t0 });
  } catch (err) {
    // A bug in a lab, not bad input (that comes back as {"ok": false}).
    self.postMessage({ type: "result", id: msg.id, error: lastLine(err) });
  }
};

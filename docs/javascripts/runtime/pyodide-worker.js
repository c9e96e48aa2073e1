// The Python side of the labs: Pyodide + NumPy + the attention_labs wheel, in a worker so
// that loading and computing never freeze the page.
//
// Messages in:  {type: "init", indexURL, wheelURL, stdlibURL?, stdlibMoreURL?, lockFileURL?,
//                expect?, interruptBuffer?, warmLab?}  (expect: {url: {size, sha256}})
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

/** The message of an error; for a Python traceback, its exception (last "Name: ..." line
 * and the lines of its message after it, joined). */
function lastLine(err) {
  const lines = String(err?.message || err)
    .trim()
    .split("\n");
  let at = lines.length - 1;
  while (at > 0 && !/^[A-Za-z_][\w.]*: /.test(lines[at])) at--;
  if (!/^[A-Za-z_][\w.]*: /.test(lines[at])) at = lines.length - 1;
  return lines.slice(at).join(" ").replace(/\s+/g, " ");
}

// What a reader should do when a file is missing or damaged on the server.
const HOST_HINT =
  "The site's copy of it is missing or broken: reload the page later, and tell the site's maintainer if it stays.";

/** A file of the start-up by the name a reader knows it, with its own file name. */
function describe(url) {
  const name = decodeURIComponent(new URL(url, self.location.href).pathname.split("/").pop());
  if (name.endsWith(".wasm")) return `Python's WebAssembly core (${name})`;
  if (name.endsWith(".js") || name.endsWith(".mjs")) return `Python's loader (${name})`;
  if (name.includes("stdlib")) return `Python's standard library (${name})`;
  if (name.startsWith("numpy")) return `NumPy (${name})`;
  if (name.startsWith("attention_labs")) return `the labs package (${name})`;
  if (name.endsWith(".json")) return `Python's package list (${name})`;
  return name;
}

// The first failure of any download of the start-up: Pyodide itself swallows some (a wasm
// that does not compile, a stdlib that does not download) and then waits for ever or exits
// with "exit(1)", so every step races this promise and the reader sees what failed.
let failStart = null;
let startFailed = null;
let startError = null; // the first such failure's Error
function newFailure() {
  startFailed = new Promise((_, reject) => {
    failStart = (message) => {
      const err = new Error(message);
      startError = startError || err;
      reject(startError);
      return err;
    };
  });
  startFailed.catch(() => {});
}

const hex = (buffer) =>
  Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");

/** Check one downloaded file's size and (where the browser can hash) sha256. */
async function checked(url, response, want) {
  let bytes;
  try {
    bytes = await response.arrayBuffer();
  } catch (err) {
    throw failStart(
      `${describe(url)} was cut off while downloading (${err.message}). ${HOST_HINT}`,
    );
  }
  const damaged = (how) =>
    failStart(`${describe(url)} is damaged: ${how} (from ${url}). ${HOST_HINT}`);
  if (want.size && bytes.byteLength !== want.size)
    throw damaged(`${bytes.byteLength} bytes instead of ${want.size}`);
  if (want.sha256 && self.crypto?.subtle) {
    const got = hex(await self.crypto.subtle.digest("SHA-256", bytes));
    if (got !== want.sha256) throw damaged("its checksum is not the one the site was built with");
  }
  return new Response(bytes, { status: response.status, headers: response.headers });
}

/**
 * Wrap fetch (Pyodide's downloads go through it) and WebAssembly.instantiateStreaming so
 * that a failed download names the file, the HTTP status and what to do, and a `.wasm`
 * served with another type than application/wasm is compiled from its bytes instead of
 * refused (streaming compile accepts only that type).
 */
function guardDownloads(expect) {
  const realFetch = self.fetch.bind(self);
  self.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), self.location.href)
      .href;
    let response;
    try {
      response = await realFetch(input, init);
    } catch (err) {
      if (!init?.integrity)
        throw failStart(
          `${describe(url)} could not be downloaded (${err.message}; ${url}). Check your connection and press Retry.`,
        );
      // A checked download that failed: a missing file fails the check too, so ask again.
      const again = await realFetch(url).catch(() => null);
      if (!again?.ok)
        throw failStart(
          `${describe(url)} could not be downloaded: ${again ? `HTTP ${again.status}` : err.message} from ${url}. ${HOST_HINT}`,
        );
      throw failStart(
        `${describe(url)} is damaged: it does not match the checksum in Python's package list (from ${url}). ${HOST_HINT}`,
      );
    }
    if (!response.ok)
      throw failStart(
        `${describe(url)} could not be downloaded: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""} from ${url}. ${HOST_HINT}`,
      );
    if (expect[url]) return checked(url, response, expect[url]);
    const type = response.headers.get("Content-Type") || "";
    if (url.endsWith(".wasm") && !type.startsWith("application/wasm")) {
      try {
        return new Response(await response.arrayBuffer(), {
          headers: { "Content-Type": "application/wasm" },
        });
      } catch (err) {
        throw failStart(
          `${describe(url)} was cut off while downloading (${err.message}). ${HOST_HINT}`,
        );
      }
    }
    return response;
  };
  const streaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = (source, imports) =>
    streaming.call(WebAssembly, source, imports).catch((err) => {
      throw failStart(
        `Python's WebAssembly core (pyodide.asm.wasm) could not be compiled: ${err.message}. ${HOST_HINT}`,
      );
    });
}

/** Why `url` could not be loaded as a script: its HTTP status or its type. */
async function whyNotScript(url) {
  try {
    const response = await fetch(url);
    const type = response.headers.get("Content-Type") || "no type";
    if (!/javascript|ecmascript/.test(type))
      return `${describe(url)} is served as ${type}, not JavaScript (from ${url}). ${HOST_HINT}`;
    return `${describe(url)} did not run (from ${url}). ${HOST_HINT}`;
  } catch (err) {
    return err.message;
  }
}

async function fetchBytes(url) {
  const response = await fetch(url);
  return response.arrayBuffer();
}

/** `promise`, unless a download of the start-up fails first. */
const orFailure = (promise) => Promise.race([promise, startFailed]);

async function init({
  indexURL,
  wheelURL,
  stdlibURL,
  stdlibMoreURL,
  lockFileURL,
  expect = {},
  interruptBuffer: buffer,
  warmLab,
}) {
  newFailure();
  guardDownloads(expect);
  // Start the labs wheel download now so that it overlaps Pyodide's start-up.
  const wheel = fetchBytes(wheelURL);
  wheel.catch(() => {}); // reported when awaited below
  try {
    importScripts(`${indexURL}pyodide.js`);
  } catch {
    throw new Error(await whyNotScript(`${indexURL}pyodide.js`));
  }
  progress(2, "Starting Python");
  let pyodide;
  try {
    pyodide = await orFailure(
      loadPyodide({
        indexURL,
        lockFileURL: lockFileURL || `${indexURL}pyodide-lock.json`,
        ...(stdlibURL ? { stdLibURL: stdlibURL } : {}),
        stdout: () => {},
        stderr: () => {},
      }),
    );
  } catch (err) {
    // importScripts of pyodide.asm.js throws a bare NetworkError: say which file and why.
    if (/importScripts|NetworkError/.test(String(err?.message)))
      throw new Error(await whyNotScript(`${indexURL}pyodide.asm.js`));
    throw err;
  }
  // The stdlib modules start-up does not need download on their first import.
  if (stdlibMoreURL) pyodide.pyimport("_stdlib_more").install(stdlibMoreURL);
  // NumPy is loaded here rather than with loadPyodide's `packages` option: that option
  // saved no time in make bench.
  // Stop button: the page writes 2 (SIGINT) here and Python raises KeyboardInterrupt.
  if (buffer) {
    interruptBuffer = buffer;
    pyodide.setInterruptBuffer(buffer);
  }
  progress(3, "Loading NumPy");
  const reasons = [];
  await orFailure(
    pyodide.loadPackage("numpy", {
      errorCallback: (m) => reasons.push(m),
      messageCallback: () => {},
    }),
  );
  if (!pyodide.loadedPackages.numpy) {
    const reason = reasons.join(" ").replace(/\s+/g, " ").slice(0, 240);
    throw new Error(`could not download NumPy from ${indexURL}${reason ? ` (${reason})` : ""}`);
  }
  progress(4, "Installing the labs");
  try {
    pyodide.unpackArchive(await orFailure(wheel), "wheel");
  } catch (err) {
    if (err === startError) throw err;
    throw new Error(`${describe(wheelURL)} is damaged (${lastLine(err)}). ${HOST_HINT}`);
  }
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

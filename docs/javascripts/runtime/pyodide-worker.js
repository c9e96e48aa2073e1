// The Python side of the labs: Pyodide + NumPy + the attention_labs wheel, in a worker so
// that loading and computing never freeze the page.
//
// Messages in:  {type: "init", indexURL, wheelURL, labsURL?, stdlibURL?, stdlibMoreURL?,
//                lockFileURL?, numpyURL?, expect?, interruptBuffer?, warmLab?}
//                (labsURL: the wheel's files as a .tar.gz; expect: {url: {size, sha256}})
//               {type: "run", id, lab, params}        (params: a JSON string)
//               {type: "source", id, source, params}  (a map source: the explorer's model
//                                                     on the reader's text, an asset back)
//               {type: "cell", id, page, code, name}  (a code cell, in page's namespace)
//               {type: "check", id, code, checks}     (a code exercise; checks: JSON)
//               {type: "forget", keep}                (drop other pages' namespaces)
// Messages out: {type: "progress", step, total, message}
//               {type: "ready", at, profile, downloads}  (profile: [[step, at], ...])
//               {type: "warm", at, profile}         (the idle warm-up after ready is done)
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

// The start-up's steps, [name, at] in order, sent with "ready" (and the idle work after
// it with "warm"): make bench shows each step's time (build_scripts/bench/bench_startup.py).
let profile = [];
const mark = (name) => profile.push([name, now()]);

/** When each start-up download of this worker ended: [[file, at], ...] (Resource Timing). */
function downloads() {
  return performance
    .getEntriesByType("resource")
    .map((e) => [e.name.split("/").pop(), performance.timeOrigin + e.responseEnd]);
}

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

// What a reader should do when a file is missing or damaged on the server...
const HOST_HINT =
  "The site's copy of it is missing or broken: reload the page later, and tell the site's maintainer if it stays.";
// ...and when the connection broke (the server had promised more bytes than came). The
// browser's own words ("Failed to fetch", "NetworkError…") differ by engine and say no more.
const NETWORK_HINT = "Check your connection.";

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

const base64Bytes = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const hex = (buffer) =>
  Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");

/** Check one downloaded file's size and (where the browser can hash) sha256. */
async function checked(url, response, want) {
  let bytes;
  try {
    bytes = await response.arrayBuffer();
  } catch {
    throw failStart(
      `${describe(url)} was cut off while downloading (from ${url}). ${NETWORK_HINT}`,
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
function guardDownloads(expect, early = []) {
  const realFetch = self.fetch.bind(self);
  // Files Pyodide asks for only later (`early`) are downloaded now, alongside the others;
  // Pyodide's own fetch of one gets that response (once).
  const prefetched = new Map(
    early.map((url) => {
      const response = realFetch(url);
      response.catch(() => {}); // reported when Pyodide asks for it
      return [url, response];
    }),
  );
  self.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), self.location.href)
      .href;
    const ahead = prefetched.get(url);
    prefetched.delete(url);
    let response;
    try {
      response = await (ahead || realFetch(input, init));
    } catch {
      if (ahead || !init?.integrity)
        throw failStart(`${describe(url)} could not be downloaded (from ${url}). ${NETWORK_HINT}`);
      // A checked download that failed: a missing file fails the check too, so ask again.
      const again = await realFetch(url).catch(() => null);
      if (!again)
        throw failStart(`${describe(url)} could not be downloaded (from ${url}). ${NETWORK_HINT}`);
      if (!again.ok)
        throw failStart(
          `${describe(url)} could not be downloaded: HTTP ${again.status} from ${url}. ${HOST_HINT}`,
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
    // The browser checked no integrity on a prefetched file: check it here instead.
    if (ahead && init?.integrity?.startsWith("sha256-"))
      return checked(url, response, { sha256: hex(base64Bytes(init.integrity.slice(7))) });
    const type = response.headers.get("Content-Type") || "";
    if (url.endsWith(".wasm") && !type.startsWith("application/wasm")) {
      try {
        return new Response(await response.arrayBuffer(), {
          headers: { "Content-Type": "application/wasm" },
        });
      } catch {
        throw failStart(
          `${describe(url)} was cut off while downloading (from ${url}). ${NETWORK_HINT}`,
        );
      }
    }
    return response;
  };
  const streaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = (source, imports) =>
    streaming.call(WebAssembly, source, imports).catch((err) => {
      // Bytes that are not WebAssembly are the host's; a stream that broke is the network's.
      if (err instanceof WebAssembly.CompileError)
        throw failStart(
          `Python's WebAssembly core (pyodide.asm.wasm) could not be compiled: ${err.message}. ${HOST_HINT}`,
        );
      throw failStart(
        `Python's WebAssembly core (pyodide.asm.wasm) was cut off while downloading. ${NETWORK_HINT}`,
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

/** The files of an uncompressed ustar archive, [path, bytes] in order (regular files
 * only: folders are made for their files). Throws on anything that is not one. */
function* tarFiles(bytes) {
  const text = new TextDecoder();
  const field = (at, length) => {
    const raw = bytes.subarray(at, at + length);
    const end = raw.indexOf(0);
    return text.decode(end < 0 ? raw : raw.subarray(0, end));
  };
  for (let at = 0; at + 512 <= bytes.length; ) {
    const name = field(at, 100);
    if (!name) return; // the zero blocks that end an archive
    if (field(at + 257, 5) !== "ustar") throw new Error(`not a tar archive at byte ${at}`);
    const size = Number.parseInt(field(at + 124, 12).trim(), 8);
    const body = at + 512;
    if (!(size >= 0) || body + size > bytes.length) throw new Error(`${name} is cut off`);
    const prefix = field(at + 345, 155);
    const type = field(at + 156, 1);
    if (type === "0" || type === "") {
      yield [prefix ? `${prefix}/${name}` : name, bytes.subarray(body, body + size)];
    }
    at = body + Math.ceil(size / 512) * 512;
  }
}

/** The bytes of a .tar.gz, gunzipped by the browser (DecompressionStream). */
async function gunzip(bytes) {
  const gz = new DecompressionStream("gzip");
  const writer = gz.writable.getWriter();
  writer.write(bytes).catch(() => {}); // a bad archive rejects the read below too
  writer.close().catch(() => {});
  return new Uint8Array(await new Response(gz.readable).arrayBuffer());
}

/** The gunzipped bytes of the .tar.gz at `url` (for installArchive); an Error naming the
 * file if it is not gzip. */
async function fetchArchive(url) {
  const bytes = new Uint8Array(await fetchBytes(url));
  try {
    return await gunzip(bytes);
  } catch (err) {
    throw new Error(`${describe(url)} is damaged (${err.message}). ${HOST_HINT}`);
  }
}

/**
 * Compile every extension module (`.so`) in the gunzipped archive `tar`, in the background
 * (WebAssembly.compile copies the bytes and compiles off this thread): a promise of
 * [path in the archive, WebAssembly.Module] for each one that compiled. One that does not
 * is left to Python's own import, which says what is wrong with it.
 */
function compileExtensions(tar) {
  const jobs = [];
  for (const [path, data] of tarFiles(tar)) {
    if (!path.endsWith(".so")) continue;
    const compiled = WebAssembly.compile(data);
    jobs.push(compiled.then((module) => [path, module]).catch(() => null));
  }
  return Promise.all(jobs).then((done) => done.filter(Boolean));
}

/**
 * Let Python's import use `compiled` (compileExtensions) for the files under `folder`:
 * Emscripten's dynamic loader takes a library's exports from `preloadedWasm[path]` when
 * there are some, so each entry there is a getter that instantiates the compiled module
 * (loadWebAssemblyModule, as a dlopen would, but without compiling) when Python first
 * imports it. Why (CONTRIBUTING, "Python's start-up"): WebKit compiles a module that a
 * dlopen asks for on this thread, and then waited behind its background compiler: 1.5 s
 * for NumPy's core and 0.2-0.5 s for a 3 kB module. Returns how many it handed over (0
 * where this Pyodide has no such loader).
 */
function preloadExtensions(pyodide, folder, compiled) {
  const loader = pyodide._module;
  if (!loader?.preloadedWasm || typeof loader.loadWebAssemblyModule !== "function") return 0;
  const preloaded = loader.preloadedWasm;
  let handed = 0;
  for (const [path, module] of compiled) {
    const file = `${folder}/${path}`;
    if (Object.hasOwn(preloaded, file)) continue;
    handed += 1;
    Object.defineProperty(preloaded, file, {
      configurable: true,
      enumerable: true,
      get() {
        // The flags and local scope a dlopen of a Python extension module (RTLD_LOCAL) uses,
        // less the pass over every undefined symbol where this module has none.
        const flags = { loadAsync: false, allowUndefined: allDefined(loader, module) };
        const exports = loader.loadWebAssemblyModule(module, flags, file, {});
        Object.defineProperty(preloaded, file, { value: exports, enumerable: true });
        return exports;
      },
    });
  }
  return handed;
}

/**
 * Whether every symbol that `module` reaches through the global offset table (its
 * "GOT.mem" and "GOT.func" imports) already has its address there or is one of its own
 * exports (which its loading writes there before anything reads them). Then the loader's
 * reportUndefinedSymbols, which a dlopen runs after each load, has nothing to do for it,
 * and skipping it (`allowUndefined`, as Pyodide's loadPackage loads each library) saves a
 * walk over the whole table: about 10,000 entries, 10-15 ms a module, 0.1 s for the nine
 * of numpy.random. False where this Pyodide's loader has no such table.
 */
function allDefined(loader, module) {
  const table = loader.GOT;
  if (!table) return false;
  const own = new Set(
    WebAssembly.Module.exports(module)
      .map((entry) => entry.name)
      .filter((name) => !name.startsWith("__")), // the loader's own (__wasm_call_ctors...)
  );
  return WebAssembly.Module.imports(module)
    .filter((entry) => entry.module.startsWith("GOT."))
    .every(({ name }) => own.has(name) || (table[name] && table[name].value !== 0));
}

/** The folder packages install into (/lib/python3.12/site-packages). */
const sitePackages = (pyodide) => pyodide.runPython("import site\nsite.getsitepackages()[0]");

/** Python code that makes the import system see files just written into `folder` (a
 * sys.path entry: site-packages). Only that folder's finder forgets its listing:
 * importlib.invalidate_caches() would also re-read the stdlib zip's index and import
 * importlib.metadata, tens of milliseconds of start-up (CONTRIBUTING, "Python's start-up"). */
const forgetListing = (folder) =>
  `import sys\nfinder = sys.path_importer_cache.get(${JSON.stringify(folder)})\n` +
  "if finder is not None: finder.invalidate_caches()\ndel finder";

/**
 * Install a package from its archive (NumPy's: build_scripts/vendor/precompile_pyodide.py;
 * the labs': labs_wheel.py; a wheel's files as one .tar.gz), given as the gunzipped `tar`, into
 * site-packages: file writes only, where Pyodide's loadPackage unzips in Python and loads
 * every extension module first. Here each extension module loads when Python first
 * imports it (a synchronous dlopen, allowed in a worker; compiled ahead where
 * preloadExtensions handed it over), so those `import numpy` does not need (numpy.random,
 * numpy.fft, NumPy's test modules) are not instantiated until used. Returns `site`.
 */
function installArchive(pyodide, name, tar) {
  const site = sitePackages(pyodide);
  const { FS } = pyodide;
  const made = new Set();
  for (const [path, data] of tarFiles(tar)) {
    const file = `${site}/${path}`;
    const folder = file.slice(0, file.lastIndexOf("/"));
    if (!made.has(folder)) FS.mkdirTree(folder);
    made.add(folder);
    FS.writeFile(file, data, { canOwn: true });
  }
  pyodide.runPython(forgetListing(site));
  pyodide.loadedPackages[name] = "self-hosted archive"; // a later loadPackage skips it
  return site;
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
  labsURL,
  stdlibURL,
  stdlibMoreURL,
  lockFileURL,
  numpyURL,
  expect = {},
  interruptBuffer: buffer,
  warmLab,
}) {
  profile = [];
  mark("worker started");
  newFailure();
  // The wasm (10 MB) is asked for only once pyodide.asm.js has run, NumPy once Python has
  // started: both are downloaded from the start instead (the wasm is still compiled as it
  // streams in, and cached by the browser as before).
  const gunzips = typeof DecompressionStream === "function";
  const numpyArchive = numpyURL?.endsWith(".tar.gz") && gunzips;
  // The labs likewise: their archive where there is one, else the wheel (unpackArchive).
  const labsArchive = Boolean(labsURL) && gunzips;
  const labsFrom = labsArchive ? labsURL : wheelURL;
  guardDownloads(expect, [
    `${indexURL}pyodide.asm.wasm`,
    ...(numpyURL && !numpyArchive ? [numpyURL] : []),
  ]);
  // Start the labs' and NumPy's downloads now (checked as they arrive) so that they overlap
  // Pyodide's start-up; an archive is gunzipped as soon as it is here, while Python starts.
  const labs = labsArchive ? fetchArchive(labsURL) : fetchBytes(wheelURL);
  labs.catch(() => {}); // reported when awaited below
  const numpy = numpyArchive ? fetchArchive(numpyURL) : null;
  numpy?.catch(() => {});
  // NumPy's extension modules compile in the background while Python starts.
  const numpyCompiled = numpy?.then(compileExtensions);
  numpyCompiled?.catch(() => {});
  try {
    importScripts(`${indexURL}pyodide.js`);
  } catch {
    throw new Error(await whyNotScript(`${indexURL}pyodide.js`));
  }
  mark("loader script (pyodide.js)");
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
  mark("Python started (loadPyodide: wasm, stdlib, interpreter)");
  // The stdlib modules start-up does not need, and NumPy's subpackages left out of its
  // archive (ma, polynomial, testing: vendor-lock.json), download on first import.
  if (stdlibMoreURL) pyodide.pyimport("_stdlib_more").install(stdlibMoreURL);
  // Stop button: the page writes 2 (SIGINT) here and Python raises KeyboardInterrupt.
  if (buffer) {
    interruptBuffer = buffer;
    pyodide.setInterruptBuffer(buffer);
  }
  progress(3, "Loading NumPy");
  if (numpy) {
    const tar = await orFailure(numpy);
    let site;
    try {
      site = installArchive(pyodide, "numpy", tar);
    } catch (err) {
      throw new Error(`${describe(numpyURL)} is damaged (${lastLine(err)}). ${HOST_HINT}`);
    }
    mark("NumPy installed (its archive unpacked)");
    preloadExtensions(pyodide, site, await numpyCompiled);
    mark("NumPy's extension modules compiled (in the background)");
  } else {
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
    mark("NumPy wheel installed (loadPackage)");
  }
  pyodide.runPython("import numpy");
  mark("import numpy (and its core C extension)");
  progress(4, "Installing the labs");
  const labsBytes = await orFailure(labs);
  try {
    if (labsArchive) {
      installArchive(pyodide, "attention_labs", labsBytes);
    } else {
      pyodide.unpackArchive(labsBytes, "wheel");
      pyodide.runPython(forgetListing(sitePackages(pyodide)));
    }
  } catch (err) {
    throw new Error(`${describe(labsFrom)} is damaged (${lastLine(err)}). ${HOST_HINT}`);
  }
  mark(labsArchive ? "labs installed (their archive unpacked)" : "labs wheel installed");
  const runLabJson = pyodide.runPython(
    "from attention_labs.labs import run_lab_json\nrun_lab_json",
  );
  mark("import attention_labs.labs");
  // Code cells' module, imported on first use or once Python is idle after "ready".
  let cells = null;
  const cellsModule = () => {
    if (cells) return cells;
    cells = pyodide.pyimport("attention_labs.cells");
    // With an interrupt buffer, make time.sleep stoppable too (it sleeps in short slices).
    if (interruptBuffer)
      pyodide.runPython(
        "import time\nfrom attention_labs import cells\ntime.sleep = cells.interruptible_sleep",
      );
    return cells;
  };
  // After "ready", while nobody waits: warm the code path of the page's lab (or the first
  // registered lab, on a page with cells only) so the first change is fast, and import the
  // cells' module. Requests queued during start-up run first (they await `ready`, which
  // resolves before this timer fires). A lab's defaults may be invalid (real_head needs
  // q and k): that answer is an {"ok": false}, and the path is warm all the same.
  const warmUp = () => {
    profile = [];
    try {
      const warm =
        warmLab || pyodide.runPython("from attention_labs.labs import LABS\nnext(iter(LABS))");
      runLabJson(warm, "{}");
      mark(`warm-up run of the lab ${warm}`);
      cellsModule();
      mark("import attention_labs.cells");
    } catch (err) {
      console.warn("the start-up warm-up failed", err); // the first real request will say
    }
    self.postMessage({ type: "warm", at: now(), profile });
  };
  // Map sources (attention_labs.models.sources), imported on the first request for one.
  let sources = null;
  const sourcesModule = () => {
    sources = sources || pyodide.pyimport("attention_labs.models.sources");
    return sources;
  };
  return {
    run: runLabJson,
    source: (...args) => sourcesModule().run_source_json(...args),
    cell: (...args) => cellsModule().run_cell_json(...args),
    check: (...args) => cellsModule().check_code_json(...args),
    forget: (keep) => cells?.forget_namespaces(keep),
    warmUp,
  };
}

/** The JSON answer of one request (cell, check, map source or lab run). */
function call(py, msg) {
  if (msg.type === "cell") {
    const emit = (json) => self.postMessage({ type: "output", id: msg.id, json });
    return py.cell(msg.page, msg.code, msg.name, emit);
  }
  if (msg.type === "check") return py.check(msg.code, msg.checks, msg.name || "<exercise>");
  if (msg.type === "source") return py.source(msg.source, msg.params);
  return py.run(msg.lab, msg.params);
}

// A start-up download that failed is reported once, as the lab's message (init-error).
// Pyodide awaits some of its downloads in promises nobody catches, so the same Error would
// also surface as an unhandled rejection, which the browser hands to the page as an
// uncaught error of its own: that second report is dropped. Any other rejection stays.
self.addEventListener("unhandledrejection", (event) => {
  if (startError && event.reason === startError) event.preventDefault();
});

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "init") {
    if (ready) return;
    ready = init(msg);
    ready.then(
      (py) => {
        mark("ready");
        self.postMessage({ type: "ready", at: now(), profile, downloads: downloads() });
        setTimeout(py.warmUp, 0);
      },
      (err) => self.postMessage({ type: "init-error", error: lastLine(err) }),
    );
    return;
  }
  if (!["run", "source", "cell", "check", "forget"].includes(msg.type)) return;
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
    // A bug in a lab or source, not bad input (that comes back as {"ok": false}).
    self.postMessage({ type: "result", id: msg.id, error: lastLine(err) });
  }
};

// Start the vendored Pyodide under Node and run precompile_pyodide.py in it (see there).
//
//   node precompile_pyodide.mjs <pyodide dir> <job JSON>
//
// job: {"stdlib": {src, out, more, keep: [module names], finder: source, numpy: wheel,
//                  deferred: [[wheel, [folders], [suffixes to drop]], ...]}?,
//       "wheels": [[src, out, [suffixes to drop], archive (.tar.gz) or null], ...],
//       "labs": {src, out, package, numpy: wheel}?}, paths on this machine ("labs": our
// own wheel, compiled as the others, then installed and every module of `package`
// imported, NumPy loaded first, to list any Python still had to compile). The
// folders of every path are mounted into Pyodide's file system (NODEFS), so Python reads
// and writes the host's files. Prints one JSON line of what was done.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const [dir, jobText] = process.argv.slice(2);
const job = JSON.parse(jobText);
const { loadPyodide } = require(path.join(path.resolve(dir), "pyodide.js"));
const here = path.dirname(new URL(import.meta.url).pathname);

const pyodide = await loadPyodide({
  indexURL: `${path.resolve(dir)}/`,
  env: { PYTHONHASHSEED: "0" }, // frozensets of constants are marshalled in hash order
  stdout: (line) => process.stderr.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
});
const mounts = new Map();
const inPyodide = (file) => {
  const folder = path.dirname(path.resolve(file));
  if (!mounts.has(folder)) {
    const point = `/host${mounts.size}`;
    pyodide.FS.mkdirTree(point);
    pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: folder }, point);
    mounts.set(folder, point);
  }
  return `${mounts.get(folder)}/${path.basename(file)}`;
};
pyodide.FS.mkdirTree("/precompile");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: here }, "/precompile");
const tool = pyodide.pyimport("sys");
tool.path.insert(0, "/precompile");
const mod = pyodide.pyimport("precompile_pyodide");
const done = { python: pyodide.runPython("import sys; sys.version") };
if (job.stdlib) {
  // What NumPy imports belongs in the first zip: load it (the official wheel) first.
  if (job.stdlib.numpy) await pyodide.loadPackage(path.resolve(job.stdlib.numpy));
  const { src, out, more, keep, finder } = job.stdlib;
  // A wheel's subpackages that start-up leaves out go into the second zip with the stdlib's.
  const deferred = (job.stdlib.deferred || []).map(([wheel, folders, drop]) => [
    inPyodide(wheel),
    folders,
    drop,
  ]);
  const made = mod.precompile_stdlib.callKwargs(
    inPyodide(src),
    inPyodide(out),
    inPyodide(more),
    pyodide.toPy(keep),
    finder,
    { deferred: pyodide.toPy(deferred) },
  );
  done.stdlib = made.toJs({ dict_converter: Object.fromEntries });
}
done.wheels = [];
for (const [src, out, drop, archive] of job.wheels || []) {
  const made = mod.precompile_wheel.callKwargs(inPyodide(src), inPyodide(out), drop || [], {
    archive: archive ? inPyodide(archive) : null,
  });
  done.wheels.push(made.toJs({ dict_converter: Object.fromEntries }));
}
if (job.labs) {
  const { src, out, package: name, numpy } = job.labs;
  // Sources kept: readers read the labs' code in the browser (inspect.getsource, tracebacks).
  const made = mod.precompile_wheel.callKwargs(inPyodide(src), inPyodide(out), [], {
    keep_sources: true,
  });
  done.labs = made.toJs({ dict_converter: Object.fromEntries });
  await pyodide.loadPackage(path.resolve(numpy));
  const checked = mod.check_imports.callKwargs(inPyodide(out), name, { keep_sources: true });
  done.labs.check = checked.toJs({ dict_converter: Object.fromEntries });
}
process.stdout.write(`${JSON.stringify(done)}\n`);

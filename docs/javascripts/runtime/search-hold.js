// Holds Material's search index until the reader opens search, on every page.
// build_scripts/hooks/preload.py inlines this file in the head, ahead of Material's bundle.
//
// Why: Material's search worker builds its index of the whole site (lunr) as each page
// opens: some 0.3 s of CPU in Chromium on a 2-core machine, more on a phone, on every page a
// reader opens, though most readers never search; on a page with labs it would also take a
// core from Python's start-up. So the messages the page posts to that worker (the index
// first) wait here until the reader opens search or focuses its field (a click, or one of
// Material's keys: / s f); then they go in order, the index is built (Material says
// "Initializing search" meanwhile) and the page gets the browser's Worker back. Every other
// worker (Python's) is the browser's own.
{
  const Real = window.Worker;
  let held = [];
  let open = false;
  const release = () => {
    if (open) {
      return;
    }
    open = true;
    window.Worker = Real;
    for (const [worker, args] of held) {
      Real.prototype.postMessage.apply(worker, args);
    }
    held = [];
  };
  // A function expression, neither a class nor a declaration: Material calls it with `new`,
  // which gives the object it returns (the browser's worker); and a function declared in a
  // block of a classic script would also be written to the global Worker.
  const Worker = function (url, options) {
    const worker = new Real(url, options);
    const search = /\/workers\/search\.[^/]*\.js$/.test(new URL(url, location.href).pathname);
    if (!open && search) {
      worker.postMessage = function (...args) {
        if (open) {
          Real.prototype.postMessage.apply(worker, args);
        } else {
          held.push([worker, args]);
        }
      };
    }
    return worker;
  };
  Worker.prototype = Real.prototype;
  window.Worker = Worker;
  document.addEventListener(
    "change",
    (event) => {
      if (event.target.id === "__search") {
        release();
      }
    },
    true,
  );
  document.addEventListener(
    "focusin",
    (event) => {
      if (event.target.closest?.(".md-search")) {
        release();
      }
    },
    true,
  );
}

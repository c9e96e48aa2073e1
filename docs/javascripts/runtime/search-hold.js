// Holds Material's search index until Python has started, on a page with labs.
// build_scripts/hooks/preload.py inlines this file in the head, ahead of Material's bundle,
// as a script whose data-settled attribute names the event the runtime dispatches when
// Python's start-up is over (LabRuntime.whenSettled).
//
// Why: Material's search worker builds its index of the whole site (lunr) as the page opens,
// about a second of CPU that, on two cores, takes one from Python's start-up beside the
// page's own main thread. So the messages the page posts to that worker (the index first)
// wait here until that event, or until the reader opens search or focuses its field; then
// they go in order and the page gets the browser's Worker back. Every other worker
// (Python's) is the browser's own.
{
  const settled = document.currentScript.dataset.settled;
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
  addEventListener(settled, release);
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

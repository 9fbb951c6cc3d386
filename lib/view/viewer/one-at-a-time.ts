// A worker's messages handled one after another, each to its very end — its cleanup included —
// before the next one starts. pdf.js shares one port to its own worker between documents, and a
// document still being destroyed refuses the next one ("PDFWorker.create - the worker is being
// destroyed"): a damaged PDF followed closely by a good one left the good one with no thumbnail
// on a busy machine (stop 38's CI).

export function oneAtATime<T>(handle: (message: T) => Promise<void>): (message: T) => Promise<void> {
  let last: Promise<void> = Promise.resolve();
  return (message) => {
    const run = last.then(() => handle(message));
    // One that fails does not stop the ones after it.
    last = run.catch(() => {});
    return run;
  };
}

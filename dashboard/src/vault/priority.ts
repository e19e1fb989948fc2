// A note being opened has the server to itself: the vault index's next page (a large
// vault loads 500 summaries a request for seconds after a page load) is asked only once
// the note's own requests are answered, so a link clicked meanwhile does not share the
// server with the index more than the page already in flight.
let inFlight = 0;
let waiting: (() => void)[] = [];
// A request that hangs must not stop the index from loading.
const AT_MOST_MS = 1500;

function settle(): void {
  inFlight--;
  if (inFlight > 0) return;
  const ready = waiting;
  waiting = [];
  for (const go of ready) go();
}

/** Counts `request` as part of a note's opening until it is answered. */
export function opening<T>(request: Promise<T>): Promise<T> {
  inFlight++;
  request.then(settle, settle);
  return request;
}

/** Resolves when no note is being opened (or after AT_MOST_MS). */
export function noOpening(): Promise<void> {
  if (inFlight === 0) return Promise.resolve();
  return new Promise((go) => {
    waiting.push(go);
    window.setTimeout(go, AT_MOST_MS);
  });
}

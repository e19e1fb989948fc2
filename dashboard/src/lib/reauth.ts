// A call refused because the session expired waits here until the person signs in
// again in the dialog over the page, then is retried: an unsaved edit is saved, not lost.
import { ApiError } from "./api";

let waiting: Array<() => void> = [];

export function signedInAgain(): void {
  const resolve = waiting;
  waiting = [];
  for (const r of resolve) r();
}

export function nextSignIn(): Promise<void> {
  return new Promise((resolve) => waiting.push(resolve));
}

/** Run `fn`; when it fails with 401, wait for the next sign-in and run it once more. */
export async function withSession<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      await nextSignIn();
      return fn();
    }
    throw error;
  }
}

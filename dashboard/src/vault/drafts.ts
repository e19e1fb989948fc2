// Unsaved edits, by note: kept in memory for the tab's life, so moving to another note,
// the search page or a session expiry loses nothing. The tree marks notes that have one;
// leaving the page with any asks first.
import { Store } from "../lib/store";
import { fold } from "./keys";

export interface Draft {
  path: string;
  text: string;
  /** The version the edit started from (0: a note not saved yet). */
  baseVersion: number;
  baseText: string;
}

export const drafts = new Store<Map<string, Draft>>(new Map());

export function getDraft(path: string): Draft | undefined {
  return drafts.value.get(fold(path));
}

export function setDraft(draft: Draft): void {
  const next = new Map(drafts.value);
  if (draft.text === draft.baseText) next.delete(fold(draft.path));
  else next.set(fold(draft.path), draft);
  drafts.set(next);
}

export function clearDraft(path: string): void {
  if (!drafts.value.has(fold(path))) return;
  const next = new Map(drafts.value);
  next.delete(fold(path));
  drafts.set(next);
}

export function moveDraft(from: string, to: string): void {
  const draft = getDraft(from);
  if (!draft) return;
  clearDraft(from);
  setDraft({ ...draft, path: to });
}

window.addEventListener("beforeunload", (event) => {
  if (drafts.value.size > 0) {
    event.preventDefault();
    event.returnValue = "";
  }
});

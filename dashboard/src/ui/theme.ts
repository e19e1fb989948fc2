// Light, dark, or the system's choice; the choice (not a secret) is kept in localStorage.
import { Store } from "../lib/store";

export type Theme = "system" | "light" | "dark";
const KEY = "memvault.theme";

export const theme = new Store<Theme>((localStorage.getItem(KEY) as Theme | null) ?? "system");

export function nextTheme(t: Theme): Theme {
  return t === "system" ? "light" : t === "light" ? "dark" : "system";
}

export function applyTheme(t: Theme): void {
  localStorage.setItem(KEY, t);
  const dark = t === "dark" || (t === "system" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

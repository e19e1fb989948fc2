// A tiny observable value and the hook that re-renders a component when it changes:
// what the app shares (the session, the vault's note index) without a state library.
import { useEffect, useState } from "preact/hooks";

export class Store<T> {
  private listeners = new Set<(value: T) => void>();
  constructor(private current: T) {}

  get value(): T {
    return this.current;
  }

  set(next: T): void {
    if (Object.is(next, this.current)) return;
    this.current = next;
    for (const listener of [...this.listeners]) listener(next);
  }

  update(change: (value: T) => T): void {
    this.set(change(this.current));
  }

  subscribe(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function useStore<T>(store: Store<T>): T {
  const [value, setValue] = useState(store.value);
  useEffect(() => {
    setValue(store.value);
    return store.subscribe(setValue);
  }, [store]);
  return value;
}

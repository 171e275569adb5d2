/** A map of at most `maxEntries`, the oldest set first out: for small facts this process learnt of blobs it wrote. */
export interface RecentEntries<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
}

export function createRecentEntries<V>(maxEntries = 1024): RecentEntries<V> {
  const entries = new Map<string, V>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}

'use client';
// A live query that runs at most once per `intervalMs`. Dexie's own live queries re-run on every
// commit that touches what they read — during an initial sync that is every page the worker
// writes. This one listens for commits to the named tables (Dexie's `storagemutated` event, which
// also carries the worker's commits) and re-runs the query on the leading edge, then at most once
// per interval while commits keep coming, so the screens stay current without competing with the
// sync for IndexedDB.
import { Dexie, type ObservabilitySet } from 'dexie';
import { startTransition, useEffect, useRef, useState } from 'react';

export function useThrottledQuery<T>(
  db: Dexie,
  tables: readonly string[],
  query: () => Promise<T>,
  deps: readonly unknown[],
  intervalMs = 250,
  /** A key for the result (e.g. JSON of plain rows): a re-run whose key is unchanged renders nothing. */
  keyOf?: (value: T) => string,
): T | undefined {
  const [value, setValue] = useState<T | undefined>(undefined);
  const latest = useRef(query);
  latest.current = query;
  const shownKey = useRef<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    let running = false;
    let dirty = false;
    let lastRun = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const prefixes = tables.map((table) => `idb://${db.name}/${table}/`);

    const run = async () => {
      running = true;
      dirty = false;
      lastRun = Date.now();
      try {
        const result = await latest.current();
        // IndexedDB hands back new objects on every read: without a key, every commit to the
        // table renders the whole list again, whether the rows read changed or not (a change to a
        // row outside the window, say).
        const key = keyOf ? keyOf(result) : null;
        if (cancelled || (key !== null && key === shownKey.current)) return;
        shownKey.current = key;
        // A transition: React renders the new rows in slices that yield to input and paint (a
        // list's first render was one task of 100-300 ms at 4× CPU, most of the first screen's
        // blocking time), where an update from a promise would otherwise render in one go.
        startTransition(() => setValue(() => result));
      } catch {
        // The database is closing (sign-out) or was deleted: keep what is shown.
      } finally {
        running = false;
        if (dirty) schedule();
      }
    };
    const schedule = () => {
      if (cancelled) return;
      if (running) {
        dirty = true;
        return;
      }
      if (timer !== null) return;
      timer = setTimeout(() => {
        timer = null;
        void run();
      }, Math.max(0, lastRun + intervalMs - Date.now()));
    };
    const onMutated = (parts: ObservabilitySet) => {
      if (Object.keys(parts).some((key) => prefixes.some((prefix) => key.startsWith(prefix)))) schedule();
    };
    Dexie.on('storagemutated', onMutated);
    void run();
    return () => {
      cancelled = true;
      Dexie.on.storagemutated.unsubscribe(onMutated);
      if (timer !== null) clearTimeout(timer);
    };
    // The query's own inputs are in `deps`; `tables`, the interval and `keyOf` are fixed per call site.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [db, ...deps]);

  return value;
}

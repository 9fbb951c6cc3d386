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
  /**
   * The same query's result read before the component mounted (first-rows.ts), for its deps at
   * mount: the first render shows it if it is in (`read`), the first run waits for it rather than
   * reading again (`rows`, then `taken`). A read after it follows, as after any commit: a change
   * made before this hook listened is not missed.
   */
  head?: { read?: T; rows: Promise<T | undefined>; taken(): void },
): T | undefined {
  const [value, setValue] = useState<T | undefined>(() => head?.read);
  const latest = useRef(query);
  latest.current = query;
  const shownKey = useRef<string | null>(head?.read !== undefined && keyOf ? keyOf(head.read) : null);
  // Only the first run at mount: later deps are other queries.
  const pendingHead = useRef(head);

  useEffect(() => {
    let cancelled = false;
    let running = false;
    let dirty = false;
    let lastRun = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const prefixes = tables.map((table) => `idb://${db.name}/${table}/`);

    let head = pendingHead.current;
    pendingHead.current = undefined;
    head?.taken();
    const run = async () => {
      running = true;
      dirty = false;
      lastRun = Date.now();
      try {
        const first = head;
        head = undefined;
        const early = first && (await first.rows);
        const result = early === undefined ? await latest.current() : early;
        // Read before this run listened for commits: read again (the result's key spares a render).
        if (early !== undefined) dirty = true;
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

'use client';
// The list's one snackbar: "Archived ‘amelia-hughes’ · Undo" for a few seconds after a row's
// action; a new action replaces it. Nothing waits on it: the action went into the outbox when it
// was made, so closing the app meanwhile keeps the action, and Undo is just another queued change.
// A module-level store (not state of a row: rows are virtualised, and an archived one leaves the list).
import { useSyncExternalStore } from 'react';
import { useAction } from './ActionAlert';

/** `what` completes "Couldn’t …" should the undo itself be refused. */
export type Undoable = { message: string; what: string; undo(): Promise<unknown> };

const SHOWN_MS = 6_000;
let shown: Undoable | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

/** Shows `item` for SHOWN_MS from now (or while `hold`), replacing what was shown. */
function set(item: Undoable | null) {
  shown = item;
  hold(false);
  listeners.forEach((listener) => listener());
}
/** While it is pointed at or focused, it stays (time to reach it, WCAG 2.2.1). */
function hold(held: boolean) {
  clearTimeout(timer);
  if (shown && !held) timer = setTimeout(() => set(null), SHOWN_MS);
}
export const showUndo = (item: Undoable) => set(item);

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function Snackbar() {
  const item = useSyncExternalStore(subscribe, () => shown, () => null);
  const { run, alert } = useAction();
  // The live region is always there, so that what appears in it is read out.
  return (
    <>
      <div className="snackbar" role="status" onPointerEnter={() => hold(true)} onPointerLeave={() => hold(false)} onFocus={() => hold(true)} onBlur={() => hold(false)}>
        {item && (
          <div>
            <span>{item.message}</span>
            <button
              type="button"
              onClick={() => {
                set(null);
                void run(item.what, item.undo);
              }}
            >
              Undo
            </button>
          </div>
        )}
      </div>
      {alert}
    </>
  );
}

'use client';
// Failure of a user action, shown where the user is looking: a toast (role=alert, so it is also
// read out) fixed above the page — rows are too small, and may be re-rendered away, to hold it.
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { createPortal } from 'react-dom';

/** What went wrong, in words for the person holding the phone. */
export function failureText(error: unknown): string {
  // By name, not class: errors from the sync worker arrive as copies.
  if (typeof error === 'object' && error !== null && 'message' in error) {
    const { name, message } = error as Error;
    if (name === 'QuotaExceededError' || /quota/i.test(String(message))) return 'this device’s storage for Parley is full.';
    return message ? `${String(message).replace(/\.$/, '')}.` : 'something went wrong on this device.';
  }
  return `${String(error)}.`;
}

/**
 * `run(what, work)`: awaits `work` and, if it fails, shows "Couldn't <what>: <why>" until dismissed
 * or the next action. Resolves to whether it succeeded. `alert` is the element to render: a toast,
 * or with `inline` a paragraph in place (inside a modal dialog, where the page behind is inert).
 */
export function useAction({ inline = false }: { inline?: boolean } = {}): { run(what: string, work: () => Promise<unknown>): Promise<boolean>; alert: ReactNode } {
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (what: string, work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      return true;
    } catch (e) {
      setError(`Couldn’t ${what}: ${failureText(e)}`);
      return false;
    }
  }, []);
  if (!error) return { run, alert: null };
  return {
    run,
    alert: inline ? (
      <p className="error" role="alert">
        {error}
      </p>
    ) : (
      <ActionAlert message={error} onDismiss={() => setError(null)} />
    ),
  };
}

export function ActionAlert({ message, onDismiss }: { message: string; onDismiss(): void }) {
  const [host, setHost] = useState<HTMLElement | null>(null);
  useEffect(() => setHost(document.body), []);
  if (!host) return null;
  return createPortal(
    <div className="toast" role="alert">
      <span>{message}</span>
      <button type="button" className="icon-button" aria-label="Dismiss" title="Dismiss" onClick={onDismiss}>
        ✕
      </button>
    </div>,
    host,
  );
}

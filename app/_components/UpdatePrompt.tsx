'use client';
// Registers the service worker (workbox-window) and offers "reload to update" when a new version
// is waiting; it never takes over by itself, so a user mid-edit is not reloaded under their feet.
import { useEffect, useState } from 'react';
import type { Workbox } from 'workbox-window';

export function UpdatePrompt() {
  const [waiting, setWaiting] = useState<Workbox | null>(null);
  useEffect(() => {
    if (process.env.NODE_ENV !== 'production' || !('serviceWorker' in navigator)) return;
    let cancelled = false;
    void import('workbox-window').then(({ Workbox }) => {
      if (cancelled) return;
      const wb = new Workbox('/sw.js');
      wb.addEventListener('waiting', () => setWaiting(wb));
      wb.addEventListener('controlling', () => window.location.reload());
      void wb.register();
    });
    return () => {
      cancelled = true;
    };
  }, []);
  if (!waiting) return null;
  return (
    <div className="update" role="status">
      A new version of Parley is ready.
      <button type="button" className="primary" onClick={() => waiting.messageSkipWaiting()}>
        Reload to update
      </button>
    </div>
  );
}

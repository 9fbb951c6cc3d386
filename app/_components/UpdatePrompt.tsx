'use client';
// Registers the service worker (workbox-window) and offers "reload to update" when a new version
// is waiting; it never takes over by itself, so a user mid-edit is not reloaded under their feet.
import { useEffect, useRef, useState } from 'react';
import type { Workbox } from 'workbox-window';

export function UpdatePrompt() {
  const [waiting, setWaiting] = useState<Workbox | null>(null);
  // Reloaded only when this page asked for the update: a controller that changes otherwise (the
  // registration removed by Clear-Site-Data when the device is erased, another tab's update) must
  // not reload the page under the user, nor lose what it says (the erased device's notice).
  const asked = useRef(false);
  useEffect(() => {
    if (process.env.NODE_ENV !== 'production' || !('serviceWorker' in navigator)) return;
    let cancelled = false;
    void import('workbox-window').then(({ Workbox }) => {
      if (cancelled) return;
      const wb = new Workbox('/sw.js');
      wb.addEventListener('waiting', () => setWaiting(wb));
      wb.addEventListener('controlling', () => {
        if (asked.current) window.location.reload();
      });
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
      <button type="button" className="primary" onClick={() => {
          asked.current = true;
          waiting.messageSkipWaiting();
        }}>
        Reload to update
      </button>
    </div>
  );
}

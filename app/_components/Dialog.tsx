'use client';
// A modal built on <dialog>: focus is trapped and Escape closes it, by the browser. It is rendered
// into <body> (a portal), so it never inherits the styles of where it is used (a table row's
// `white-space: nowrap` cut its text off).
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { createPortal } from 'react-dom';

export function Dialog({ title, open, onClose, children, className = '' }: { title: string; open: boolean; onClose(): void; children: ReactNode; className?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  // Unique per dialog: two can be open at once ("Sign out?" over "Sign in again").
  const titleId = useId();
  const [host, setHost] = useState<HTMLElement | null>(null);
  useEffect(() => setHost(document.body), []);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open, host]);
  if (!host) return null;
  return createPortal(
    <dialog ref={ref} className={`dialog ${className}`} aria-labelledby={titleId} onClose={onClose}>
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>,
    host,
  );
}

'use client';
// "Readable | Raw": the same file as its summary or as the text it is, one tap apart.
export function RawToggle({ raw, onChange, rawLabel }: { raw: boolean; onChange(raw: boolean): void; rawLabel: string }) {
  return (
    <div className="view-toggle" role="group" aria-label="Show as">
      <button type="button" aria-pressed={!raw} onClick={() => onChange(false)}>
        Readable
      </button>
      <button type="button" aria-pressed={raw} onClick={() => onChange(true)}>
        {rawLabel}
      </button>
    </div>
  );
}

/** File text as text: React escapes it, so markup in a file is shown, never run. */
export function RawText({ text, label }: { text: string; label: string }) {
  return (
    <pre className="raw-text" tabIndex={0} aria-label={label}>
      {text}
    </pre>
  );
}

export function Problem({ children }: { children: React.ReactNode }) {
  return (
    <p className="viewer-problem" role="status">
      {children}
    </p>
  );
}

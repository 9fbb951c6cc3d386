'use client';
import { useEffect, useState } from 'react';

/** A blob: URL for these bytes while the component is shown (revoked after). */
export function useObjectUrl(bytes: Uint8Array | null, type: string): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!bytes) return;
    const made = URL.createObjectURL(new Blob([bytes as BlobPart], { type }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [bytes, type]);
  return url;
}

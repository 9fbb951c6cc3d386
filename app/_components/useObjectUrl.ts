'use client';
import { useEffect, useState } from 'react';
import { safeObjectUrl } from '@/lib/view/viewer/safe-object-url';

/**
 * A blob: URL for these bytes while the component is shown (revoked after). Its type is inert
 * (lib/view/viewer/safe-object-url.ts): a raster image's when the bytes are one, else
 * application/octet-stream — never the file's own type, which could be SVG or HTML.
 */
export function useObjectUrl(bytes: Uint8Array | null, type: string): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!bytes) return;
    const made = safeObjectUrl(bytes, type);
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [bytes, type]);
  return url;
}

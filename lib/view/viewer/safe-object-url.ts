// The one place the app makes object URLs from bytes (eslint.config.mjs refuses URL.createObjectURL
// anywhere else). A blob: URL has the app's origin: opened as a page — "Open image in new tab" on a
// long press, a Download link opened instead of saved — a blob of an active type (SVG, HTML, XHTML,
// any XML, XSL, a script: whatever a browser renders as a document that can run script) would run
// the file's script here, with the user's token in reach. So the type a blob URL made here carries
// comes from the bytes, never from the file's declared type: a raster image's type when its first
// bytes are that image's signature (a page of one is only a picture), else
// application/octet-stream (saved, never rendered). An <img> still decodes any raster format from
// an octet-stream blob; an SVG is never shown through one (lib/view/viewer/svg-raster.ts).

export const NEUTRAL_TYPE = 'application/octet-stream';

function at(head: Uint8Array, offset: number, text: string): boolean {
  if (head.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) if (head[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** The raster image type the first bytes are the signature of, or null (SVG, text, anything else). */
export function sniffRaster(head: Uint8Array): string | null {
  if (at(head, 0, '\x89PNG\r\n\x1a\n')) return 'image/png';
  if (at(head, 0, '\xff\xd8\xff')) return 'image/jpeg';
  if (at(head, 0, 'GIF87a') || at(head, 0, 'GIF89a')) return 'image/gif';
  if (at(head, 0, 'RIFF') && at(head, 8, 'WEBP')) return 'image/webp';
  if (at(head, 4, 'ftyp') && (at(head, 8, 'avif') || at(head, 8, 'avis'))) return 'image/avif';
  if (at(head, 0, 'BM') && head.length >= 26) return 'image/bmp';
  if (at(head, 0, '\x00\x00\x01\x00') || at(head, 0, '\x00\x00\x02\x00')) return 'image/x-icon';
  return null;
}

/**
 * The type an object URL of these bytes may carry. `declared` only chooses between "show" and
 * "save": application/octet-stream (in any case, with parameters) stays that. Any other declared
 * type — image/svg+xml, text/html, none at all — gives the sniffed raster type or octet-stream.
 */
export function inertType(declared: string, bytes: Uint8Array): string {
  if (declared.split(';')[0]!.trim().toLowerCase() === NEUTRAL_TYPE) return NEUTRAL_TYPE;
  return sniffRaster(bytes.subarray(0, 32)) ?? NEUTRAL_TYPE;
}

/** A blob: URL of these bytes with an inert type (inertType). Revoke it with URL.revokeObjectURL. */
export function safeObjectUrl(bytes: Uint8Array, declared: string): string {
  // eslint-disable-next-line no-restricted-syntax -- the one place: the type is made inert here.
  return URL.createObjectURL(new Blob([bytes as BlobPart], { type: inertType(declared, bytes) }));
}

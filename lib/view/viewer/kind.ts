// Which viewer a file gets. Decided from its name and declared type first (enough for the list's
// icon), then from its first bytes once they are here: a server may store an HL7 message as
// text/plain or a FHIR resource as application/octet-stream, and a clinician should still read it.

export type ViewKind = 'image' | 'pdf' | 'fhir' | 'json' | 'hl7' | 'csv' | 'text' | 'other';

const IMAGE_EXT = /\.(png|jpe?g|gif|webp|bmp|avif|svg|ico)$/i;
const TEXT_EXT = /\.(txt|text|md|log|xml|html?|ini|yaml|yml|tsv|ccda|cda)$/i;

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : '';
}

/** From the name and declared type alone (the file list, before any byte is read). */
export function kindOfName(name: string, type: string): ViewKind {
  const t = type.toLowerCase().split(';')[0]!.trim();
  if (t === 'application/pdf' || /\.pdf$/i.test(name)) return 'pdf';
  if (t === 'application/fhir+json' || /\.fhir(\.json)?$/i.test(name)) return 'fhir';
  if (/hl7/.test(t) || /\.(hl7|er7)$/i.test(name)) return 'hl7';
  if (t.startsWith('image/') || IMAGE_EXT.test(name)) return 'image';
  if (t === 'text/csv' || /\.csv$/i.test(name)) return 'csv';
  if (t === 'application/json' || t.endsWith('+json') || /\.json$/i.test(name)) return 'json';
  if (t.startsWith('text/') || TEXT_EXT.test(name)) return 'text';
  return 'other';
}

function startsWith(head: Uint8Array, text: string): boolean {
  if (head.length < text.length) return false;
  for (let i = 0; i < text.length; i++) if (head[i] !== text.charCodeAt(i)) return false;
  return true;
}

/** True when the bytes read as text: no NUL and valid UTF-8 (a cut multi-byte character at the end is fine). */
export function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, Math.max(0, head.length - 4)));
    return true;
  } catch {
    return false;
  }
}

/** With the first bytes (a few KiB): what the content says wins where the name was vague or wrong. */
export function kindOf(name: string, type: string, head: Uint8Array): ViewKind {
  const byName = kindOfName(name, type);
  if (startsWith(head, '%PDF-')) return 'pdf';
  // Skip a byte-order mark and leading blank lines before looking at the first characters.
  let start = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) start = 3;
  while (start < head.length && (head[start] === 0x20 || head[start] === 0x0a || head[start] === 0x0d || head[start] === 0x09)) start++;
  const rest = head.subarray(start);
  if (startsWith(rest, 'MSH') && rest.length > 4 && rest[4] !== undefined) return 'hl7';
  if (byName === 'json' || byName === 'fhir' || (rest[0] === 0x7b && byName !== 'image' && byName !== 'pdf')) {
    const text = new TextDecoder().decode(rest.subarray(0, 4096));
    if (/"resourceType"\s*:\s*"[A-Za-z]+"/.test(text)) return 'fhir';
    return byName === 'fhir' ? 'fhir' : 'json';
  }
  if (byName === 'other' && looksLikeText(head)) return 'text';
  return byName;
}

export const KIND_LABEL: Record<ViewKind, string> = {
  image: 'Image',
  pdf: 'PDF',
  fhir: 'FHIR',
  json: 'JSON',
  hl7: 'HL7',
  csv: 'CSV',
  text: 'Text',
  other: 'File',
};

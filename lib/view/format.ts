// How values read to a person: sizes, times, media types. Pure functions, shared by every screen.

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** 1536 → "1.5 KB" (powers of 1024, one decimal below 10). */
export function humanSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** "31 of 48 MB" (one unit when both share it), "512 KB of 2.0 MB" otherwise. */
export function sizeOf(part: number, total: number): string {
  const [a, b] = [humanSize(part), humanSize(total)];
  const [value, unit] = a.split(' ');
  return b.endsWith(` ${unit}`) ? `${value} of ${b}` : `${a} of ${b}`;
}

const TYPE_NAMES: Record<string, string> = {
  'application/pdf': 'PDF',
  'application/fhir+json': 'FHIR resource',
  'application/json': 'JSON',
  'application/xml': 'XML',
  'text/xml': 'XML',
  'application/dicom': 'DICOM image',
  'application/zip': 'ZIP archive',
  'application/gzip': 'GZIP archive',
  'application/msword': 'Word document',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'Word document',
  'text/plain': 'Text',
  'text/csv': 'CSV table',
  'text/html': 'Web page',
  'audio/mpeg': 'MP3 audio',
  'image/svg+xml': 'SVG image',
};

/**
 * A file's type in words, wherever one is shown: "image/png" → "PNG image", an HL7 v2 message under
 * any of its names ("x-application/hl7-v2+er7", "application/hl7-v2") → "HL7 v2 message", and a type
 * with no plain name → "File", never the raw media type.
 */
export function humanType(type: string): string {
  const t = type.toLowerCase().replace(/;.*$/s, '').trim();
  if (TYPE_NAMES[t]) return TYPE_NAMES[t];
  if (t.includes('hl7')) return 'HL7 v2 message';
  if (t.includes('fhir')) return 'FHIR resource';
  const [kind = '', sub = ''] = t.split('/');
  // "x-icon", "vnd.ms-photo", "heic-sequence": only a short plain subtype reads as a format's name.
  const format = sub.replace(/^(x-|vnd\.)/, '').replace(/\+.*$/, '');
  if (kind === 'image' || kind === 'video' || kind === 'audio') return /^[a-z0-9]{2,5}$/.test(format) ? `${format.toUpperCase()} ${kind}` : kind.charAt(0).toUpperCase() + kind.slice(1);
  if (kind === 'text') return 'Text';
  return 'File';
}

/** A broad family for filtering: image, document, data, other. */
export function typeFamily(type: string): 'image' | 'document' | 'data' | 'other' {
  if (type.startsWith('image/')) return 'image';
  if (type === 'application/pdf' || type.startsWith('text/') || type.includes('word')) return 'document';
  if (type.includes('json') || type.includes('xml') || type.includes('hl7') || type.includes('dicom')) return 'data';
  return 'other';
}

// One Intl.DateTimeFormat per style, made on first use: `toLocaleString(locale, options)` builds a
// new formatter on every call (~0.3 ms each in Chromium), and a list formats on every row of every
// render. (The first screen on a phone uses none of these: see relativeTime.)
function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}
const formats = {
  clock: once(() => new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })),
  full: once(() => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })),
};

/** Unix seconds → the local time today (hh:mm), else the date (shortDate); null → an em dash. */
export function humanTime(seconds: number | null, now = Date.now()): string {
  if (seconds === null) return '—';
  const date = new Date(seconds * 1000);
  return new Date(now).toDateString() === date.toDateString() ? formats.clock().format(date) : shortDate(date, now);
}

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');

/** A date as every screen shows it, without Intl: "12 Mar" this year, "12 Mar 2025" another. */
export function shortDate(date: Date, now = Date.now()): string {
  const day = `${date.getDate()} ${MONTHS[date.getMonth()]}`;
  return date.getFullYear() === new Date(now).getFullYear() ? day : `${day} ${date.getFullYear()}`;
}

/**
 * Unix seconds → how long ago, as a messaging app says it: "just now", "5 min ago", "3 h ago",
 * "yesterday", "4 days ago" (calendar days), and beyond a week the date ("12 Mar", shortDate).
 * No Intl: the conversations list shows this on every row of the first screen, and a page's
 * first use of Intl loads ICU's data (40-150 ms of one main-thread task on this machine's
 * Chromium, 4× that on the phone Lighthouse simulates). The exact date is in the row's title
 * (fullTime, made when pointed at) and on the conversation's page.
 */
export function relativeTime(seconds: number | null, now = Date.now()): string {
  if (seconds === null) return '—';
  const ago = Math.max(0, Math.floor(now / 1000) - seconds);
  if (ago < 60) return 'just now';
  if (ago < 3600) return `${Math.floor(ago / 60)} min ago`;
  const date = new Date(seconds * 1000);
  const today = new Date(now);
  if (date.toDateString() === today.toDateString()) return `${Math.floor(ago / 3600)} h ago`;
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (date.toDateString() === yesterday.toDateString()) return 'yesterday';
  const days = Math.round((new Date(today.toDateString()).getTime() - new Date(date.toDateString()).getTime()) / 86_400_000);
  if (days < 7) return `${days} days ago`;
  return shortDate(date, now);
}

/** 12345 → "12,345", without Intl (see relativeTime). */
export function groupedNumber(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A count with its noun, as every screen says it: (1, 'file') → "1 file", (1001, 'file') → "1,001 files". */
export function countOf(value: number, one: string, many = `${one}s`): string {
  return `${groupedNumber(value)} ${value === 1 ? one : many}`;
}

/** Unix seconds → the full local date and time (for a title, next to a relative time). */
export function fullTime(seconds: number): string {
  return formats.full().format(new Date(seconds * 1000));
}

// file_type: the declared media type when it is a real one (not octet-stream), else sniffed from
// the first bytes, else guessed from the name, else application/octet-stream.

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

export function declaredType(raw: string | undefined): string | null {
  if (!raw) return null;
  const essence = raw.split(';', 1)[0].trim().toLowerCase();
  if (!MEDIA_TYPE.test(essence) || essence === 'application/octet-stream') return null;
  return essence;
}

const startsWith = (head: Uint8Array, bytes: number[], offset = 0) =>
  head.length >= offset + bytes.length && bytes.every((b, i) => head[offset + i] === b);
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

export function sniffType(head: Uint8Array): string | null {
  if (startsWith(head, ascii('%PDF-'))) return 'application/pdf';
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(head, ascii('ftyp'), 4) && (startsWith(head, ascii('heic'), 8) || startsWith(head, ascii('heix'), 8)))
    return 'image/heic';
  if (startsWith(head, ascii('DICM'), 128)) return 'application/dicom';
  if (startsWith(head, [0x1f, 0x8b])) return 'application/gzip';
  if (startsWith(head, ascii('PK'))) return 'application/zip';
  if (startsWith(head, ascii('MSH|'))) return 'application/hl7-v2';
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head).replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('{') && /"resourceType"\s*:/.test(text)) return 'application/fhir+json';
  return null;
}

const BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  js: 'text/javascript',
  hl7: 'application/hl7-v2',
  dcm: 'application/dicom',
  zip: 'application/zip',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  mp4: 'video/mp4',
  mp3: 'audio/mpeg',
};

export function typeFromName(filename: string): string | null {
  const dot = filename.lastIndexOf('.');
  if (dot < 0) return null;
  return BY_EXTENSION[filename.slice(dot + 1).toLowerCase()] ?? null;
}

export function resolveFileType(declared: string | undefined, head: Uint8Array, filename: string): string {
  return declaredType(declared) ?? sniffType(head) ?? typeFromName(filename) ?? 'application/octet-stream';
}

/** Types a browser would run or render as a document: served as attachments, never inline. */
export function isActiveContent(type: string): boolean {
  const t = type.toLowerCase();
  return (
    t.includes('html') || // text/html, application/xhtml+xml, …
    t.includes('xml') || // image/svg+xml, text/xml, application/xml, application/xslt+xml, any +xml
    t === 'text/xsl' ||
    t === 'text/x-xsl' ||
    t === 'multipart/x-mixed-replace' ||
    t === 'application/x-shockwave-flash' ||
    isScriptOrStyle(t)
  );
}

// The WHATWG MIME Sniffing standard's JavaScript MIME type essences: with any of these (and
// nosniff) a <script src> or a worker on this origin runs the bytes.
const JAVASCRIPT_TYPES = new Set([
  'application/ecmascript',
  'application/javascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/javascript',
  'text/javascript1.0',
  'text/javascript1.1',
  'text/javascript1.2',
  'text/javascript1.3',
  'text/javascript1.4',
  'text/javascript1.5',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript',
]);

/**
 * Types a browser would execute as script or apply as a style sheet when a page of this origin
 * references the file (`<script src>`, `new Worker`, `<link rel=stylesheet>`): every JavaScript
 * MIME type, anything else that calls itself a script (vbscript, typescript, module variants
 * browsers may add), and text/css. An attachment disposition does not stop a subresource load;
 * only the served Content-Type does (with nosniff).
 */
export function isScriptOrStyle(type: string): boolean {
  const t = type.toLowerCase();
  return JAVASCRIPT_TYPES.has(t) || t.includes('script') || t === 'text/css';
}

/**
 * The Content-Type the asset host sends for a stored file_type. Script and style types go out as
 * application/octet-stream, which no browser runs or applies (under nosniff); the file's
 * file_type still reports what was declared.
 */
export function servedType(type: string): string {
  return isScriptOrStyle(type) ? 'application/octet-stream' : type;
}

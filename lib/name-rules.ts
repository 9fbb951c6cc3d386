// The rules for ids and filenames, as plain code: the schemas (lib/objects.ts, lib/schemas.ts) are
// built on them, and the page checks a name or an id with them without loading zod, whose
// evaluation alone was a long task of the main thread (issue 30).
export const ID_PATTERN = /^[A-Za-z0-9]{16}$/;
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

// Characters a filename may not contain: path separators, and anything that is invisible or
// changes how the rest of the name displays, so a name always shows as what it is
// ("invoice\u202Efdp.exe" would show as "invoiceexe.pdf"). That is every control character (Cc),
// line/paragraph separator (Zl, Zp), lone surrogate (Cs, not Unicode at all) and format character
// (Cf: bidi embeddings, overrides, isolates and marks, zero-width space, word joiner, BOM, soft
// hyphen, tag characters, …) — with two kinds of exception, because real names need them:
// ZWNJ/ZWJ (U+200C/U+200D) spell words in Persian, the Indic scripts and others, and join emoji
// sequences (👩‍⚕️); and tag characters inside an emoji tag sequence (the flags of England,
// Scotland, Wales: 🏴 + tags + cancel tag). Neither can reorder text or hide an extension.
const FILENAME_FORBIDDEN = /[/\\\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const FILENAME_ALLOWED_FORMAT = /\u200C|\u200D|\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}/gu;

/** Filenames: 1-255 bytes of UTF-8, nothing invisible or display-changing (above), not . or .. */
export function filenameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (FILENAME_FORBIDDEN.test(name.replace(FILENAME_ALLOWED_FORMAT, ''))) {
    return "can't contain / or \\ or invisible control characters";
  }
  if (new TextEncoder().encode(name).length > 255) return 'must be at most 255 bytes';
  if (name === '.' || name === '..') return 'must not be . or ..';
  return null;
}

// The one filename rule, shared by the server (upload, rename) and the client (rename dialog,
// upload queue): what it refuses, what it keeps, and the message people see.
import { describe, expect, it } from 'vitest';
import { filenameProblem } from '../../lib/schemas';

const MESSAGE = "can't contain / or \\ or invisible control characters";

describe('filenameProblem', () => {
  it('refuses separators, controls, and every format character that can change how a name displays', () => {
    const refused = [
      'a/b.txt', 'a\\b.txt', 'nul\u0000.txt', 'tab\t.txt', 'a\u001f', 'a\u007f', 'a\u009f',
      'invoice\u202Efdp.exe', '\u202Aa', '\u202Ba', '\u202Ca', '\u202Da', '\u2066a', '\u2067a', '\u2068a', '\u2069a',
      'a\u200B', '\uFEFFa', 'a\u200E', 'a\u200F', 'a\u061C', 'a\u2060', 'a\u00AD', 'a\u180E', 'a\u206F', 'a\uFFF9',
      'a\u{E0001}', 'a\u{E0041}', '\u{E0067}\u{E0062}\u{E007F}a', // tags that are no flag sequence
      'a\u2028', 'a\u2029', 'a\uD800', 'a\uDC00b',
    ];
    for (const name of refused) expect(filenameProblem(name), JSON.stringify(name)).toBe(MESSAGE);
  });

  it('keeps ZWNJ/ZWJ (Persian, Indic scripts, emoji sequences) and emoji flag tag sequences', () => {
    const kept = [
      'می‌خواهم.pdf', // ZWNJ
      'क्‍ष.txt', // ZWJ
      'ಕ್‌ನ.txt',
      '👨‍👩‍👧 family.jpg',
      '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}.png', // England
      'Résumé – ü (v2) [final].txt',
      '日本語のファイル.pdf',
      'x'.repeat(255),
    ];
    for (const name of kept) expect(filenameProblem(name), name).toBeNull();
  });

  it('the other rules still hold: empty, . and .., 255 bytes of UTF-8', () => {
    expect(filenameProblem('')).toBe('must not be empty');
    expect(filenameProblem('.')).toBe('must not be . or ..');
    expect(filenameProblem('..')).toBe('must not be . or ..');
    expect(filenameProblem('é'.repeat(128))).toBe('must be at most 255 bytes');
  });

  it('reads as a sentence after "The name" (the rename dialog) and "filename" (the API)', () => {
    expect(`The name ${filenameProblem('a\u202Eb')}.`).toBe("The name can't contain / or \\ or invisible control characters.");
  });
});

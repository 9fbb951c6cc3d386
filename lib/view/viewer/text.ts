// Text from bytes, cut at a limit so a huge log or export cannot freeze the phone; the caller says so.

export const TEXT_LIMIT = 1024 * 1024;

export interface DecodedText {
  text: string;
  /** Bytes not shown (0 when the whole file is). */
  omitted: number;
}

export function decodeText(bytes: Uint8Array, limit = TEXT_LIMIT): DecodedText {
  const shown = bytes.subarray(0, limit);
  // Not fatal: a stray invalid byte shows as � rather than hiding the whole file.
  let text = new TextDecoder('utf-8').decode(shown);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text, omitted: bytes.length - shown.length };
}

/** Where a JSON.parse error points, in words ("line 3, column 7"), from the engine's message. */
export function jsonProblem(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = /line (\d+) column (\d+)/.exec(message);
  if (line) return `line ${line[1]}, column ${line[2]}`;
  const position = /position (\d+)/.exec(message);
  if (position) {
    const before = text.slice(0, Number(position[1]));
    const lineNo = before.split('\n').length;
    return `line ${lineNo}, column ${before.length - before.lastIndexOf('\n')}`;
  }
  if (/end of (JSON )?input|Unterminated/i.test(message)) return 'the file ends too early (it may be cut short)';
  // Engines without a position quote a snippet of the file after the token: the token is enough.
  return message.replace(/, (\.\.\.)?".*$/s, '').replace(/ is not valid JSON$/, '');
}

export type ParsedJson = { ok: true; value: unknown } | { ok: false; where: string; resourceType: string | null };

export function parseJson(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    // What could still be read: the resource type named near the start.
    const named = /"resourceType"\s*:\s*"([A-Za-z]+)"/.exec(text.slice(0, 4096));
    return { ok: false, where: jsonProblem(text, error), resourceType: named ? named[1]! : null };
  }
}

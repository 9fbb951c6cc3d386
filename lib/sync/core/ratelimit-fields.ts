// Reading the RateLimit and RateLimit-Policy fields (draft-ietf-httpapi-ratelimit-headers): both
// are Structured Field Lists (RFC 9651) of Items named by a String, with parameters (`q`, `w` of a
// policy; `r`, `t` of what is left). Only what pacing needs is parsed, but strictly: a field that
// does not parse as a List is ignored whole, as the draft says of a malformed one.

/** One member of either List: its name and its integer parameters (others are comments here). */
export interface LimitItem {
  name: string;
  params: ReadonlyMap<string, number>;
}

const TOKEN_START = /[A-Za-z*]/;
const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;
const KEY_START = /[a-z*]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;

/** A List of Items; null when the field is absent or malformed. Inner Lists are not expected here: malformed. */
export function parseLimitList(field: string | null): LimitItem[] | null {
  if (field === null) return null;
  const p = { text: field, at: 0 };
  const items: LimitItem[] = [];
  skip(p, ' \t');
  if (p.at >= p.text.length) return null;
  for (;;) {
    const name = bareName(p);
    if (name === null) return null;
    const params = parameters(p);
    if (params === null) return null;
    items.push({ name, params });
    skip(p, ' \t');
    if (p.at >= p.text.length) return items;
    if (p.text[p.at] !== ',') return null;
    p.at++;
    skip(p, ' \t');
    if (p.at >= p.text.length) return null; // a trailing comma
  }
}

interface Cursor {
  text: string;
  at: number;
}

function skip(p: Cursor, chars: string) {
  while (p.at < p.text.length && chars.includes(p.text.charAt(p.at))) p.at++;
}

/** The Item's value: a String (what the draft asks for) or a Token (what some servers send). */
function bareName(p: Cursor): string | null {
  const c = p.text[p.at];
  if (c === '"') return sfString(p);
  if (c !== undefined && TOKEN_START.test(c)) {
    const start = p.at;
    while (p.at < p.text.length && TOKEN_CHAR.test(p.text.charAt(p.at))) p.at++;
    return p.text.slice(start, p.at);
  }
  return null;
}

function sfString(p: Cursor): string | null {
  let out = '';
  p.at++; // the opening quote
  while (p.at < p.text.length) {
    const c = p.text.charAt(p.at++);
    if (c === '\\') {
      const next = p.text[p.at++];
      if (next !== '"' && next !== '\\') return null;
      out += next;
    } else if (c === '"') {
      return out;
    } else if (c < ' ' || c > '~') {
      return null;
    } else {
      out += c;
    }
  }
  return null;
}

/** `;key=value` pairs; integers kept, any other well-formed value skipped, anything else malformed. */
function parameters(p: Cursor): Map<string, number> | null {
  const params = new Map<string, number>();
  while (p.text[p.at] === ';') {
    p.at++;
    skip(p, ' ');
    const start = p.at;
    if (!KEY_START.test(p.text[p.at] ?? '')) return null;
    while (p.at < p.text.length && KEY_CHAR.test(p.text.charAt(p.at))) p.at++;
    const key = p.text.slice(start, p.at);
    if (p.text[p.at] !== '=') {
      params.delete(key); // a bare key is the Boolean true: not an integer
      continue;
    }
    p.at++;
    const value = bareValue(p);
    if (value === undefined) return null;
    if (value === null) params.delete(key);
    else params.set(key, value);
  }
  return params;
}

/** An Integer (returned), another valid bare item (null), or malformed (undefined). */
function bareValue(p: Cursor): number | null | undefined {
  const rest = p.text.slice(p.at);
  const number = /^-?\d+(\.\d+)?/.exec(rest);
  if (number) {
    p.at += number[0].length;
    if (number[1] !== undefined) return null; // a Decimal
    const digits = number[0].replace('-', '');
    return digits.length > 15 ? undefined : Number(number[0]);
  }
  const c = rest[0];
  if (c === '"') return sfString(p) === null ? undefined : null;
  if (c === '?' && (rest[1] === '0' || rest[1] === '1')) {
    p.at += 2;
    return null;
  }
  if (c === ':') {
    const end = rest.indexOf(':', 1);
    if (end < 0 || !/^[A-Za-z0-9+/=]*$/.test(rest.slice(1, end))) return undefined;
    p.at += end + 1;
    return null;
  }
  if (c !== undefined && TOKEN_START.test(c)) return bareName(p) === null ? undefined : null;
  return undefined;
}

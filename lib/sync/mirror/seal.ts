// Encryption at rest of the user's databases (issue 28): a Dexie DBCore middleware that seals every
// row before IndexedDB sees it and opens it again on every read, so whoever writes or reads a row
// (rebase, pull, the outbox, the downloader, the screens) never knows. On disk a sealed row is
//   { <its primary key>, <its index keys>, $: nonce ‖ XChaCha20-Poly1305(row) }
// and, for byte fields sealed before the transaction (`sealBytes`, below), $b: { <field>: iv ‖ AES-GCM(bytes) }.
// Random ids, timestamps, sizes and the list's order keys stay in clear so the indexes keep
// working; the indexes that would name a patient (a conversation's contact and group id, its
// search words) hold keyed tokens instead (HMAC-SHA-256 under a key of their own), and a query on
// them is rewritten to the token of what was asked for.
//
// Why a synchronous cipher in JavaScript and not WebCrypto: IndexedDB commits a transaction as
// soon as a task passes without a request on it, and WebCrypto answers in a later task, so a
// transaction that reads a row, changes it and writes it back (every rebase) cannot await
// WebCrypto in between. XChaCha20-Poly1305 (@noble/ciphers, audited) rather than AES-GCM in
// JavaScript: twice as fast without AES instructions, constant-time, and its 24-byte random nonce
// never repeats in practice. Both keys are derived from the device's data key (the one the PIN or
// passkey unwraps, lib/view/lock/keys.ts) with HKDF when it is unlocked, and live in memory only.
//
// Which realm holds the keys: the page (set at unlock, dropped at lock), the sync worker (handed
// by the page at start), the service worker (told by the page while unlocked). Without keys a
// sealed row cannot be read (MirrorLockedError), and while sealing is required nothing is written
// in clear: the write fails instead.
import { mapCursorValue } from './list-keys';
import type { DBCore, DBCoreKeyRange, DBCoreQuery, DBCoreTable, Middleware } from 'dexie';

/**
 * The cipher and the keyed tokens, with their keys (sealer.ts makes one: it is loaded at unlock,
 * so the first screen does not carry the cipher).
 */
/** The two keys of the user's databases, derived from the device's data key (raw, in memory only). */
export interface MirrorKeys {
  /** 32 bytes: seals rows. */
  rowKey: Uint8Array;
  /** 32 bytes: keys the tokens of the indexes that would name a patient. */
  indexKey: Uint8Array;
  /** AES-GCM, not extractable: seals large byte fields (queued upload chunks, files' chunks) through WebCrypto, outside any transaction. */
  bytesKey: CryptoKey;
}

export interface Sealer {
  /** Handed to the sync worker, which seals with its own sealer. */
  readonly keys: MirrorKeys;
  seal(plain: Uint8Array, context: string): Uint8Array;
  /** Throws if the bytes were changed or sealed under another key. */
  open(sealed: Uint8Array, context: string): Uint8Array;
  /** A keyed token of `text`: equal texts give equal tokens, nothing else is learnt. */
  token(text: string): string;
  /** WebCrypto's AES-GCM under `bytesKey`: iv ‖ ciphertext ‖ tag. */
  sealBytes(plain: ArrayBuffer, context: string): Promise<ArrayBuffer>;
  /** Throws if the bytes were changed or sealed under another key or context. */
  openBytes(sealed: ArrayBuffer, context: string): Promise<ArrayBuffer>;
}

/** A sealed row was read (or a write attempted) without the keys: the device is locked. */
export class MirrorLockedError extends Error {
  constructor(message = 'The device is locked: its data cannot be read until it is unlocked.') {
    super(message);
    this.name = 'MirrorLockedError';
  }
}

// ---- The keys of this realm (page, worker or service worker) ----

let keys: Sealer | null = null;
let required = false;

/** Unlocked: rows are sealed and opened with this. Locked or signed out: null. */
export function setSealer(next: Sealer | null): void {
  keys = next;
  if (next) required = true;
}

/** The policy asks for a lock on this device: no row is written in clear, keys or not. */
export function requireSealing(value: boolean): void {
  required = value || keys !== null;
}

export function currentSealer(): Sealer | null {
  return keys;
}

// ---- Large byte fields, sealed before their transaction ----

/**
 * Bytes already sealed with WebCrypto (AES-GCM) by `sealBytes`, before the transaction that
 * stores them: the middleware keeps them out of the row's own (JavaScript) cipher, which costs
 * ~10× more per byte. Why not in the middleware: WebCrypto answers in a later task, and the
 * transaction would commit in between (see the top of this file). A row read back holds one of
 * these again; `openBytes` gives the plain bytes.
 */
export class SealedBytes {
  constructor(readonly raw: ArrayBuffer) {}
  /** The plain bytes' length (the iv and tag are 28 bytes). */
  get byteLength(): number {
    return this.raw.byteLength - BYTES_OVERHEAD;
  }
}

const BYTES_OVERHEAD = 12 + 16;

/**
 * Bytes to store in a row: sealed when this realm has keys; as they are on a device without a
 * lock; refused (MirrorLockedError) when the lock is required and the keys are gone.
 */
export async function sealBytes(plain: ArrayBuffer, context: string): Promise<ArrayBuffer | SealedBytes> {
  if (!keys) {
    if (required) throw new MirrorLockedError();
    return plain;
  }
  return new SealedBytes(await keys.sealBytes(plain, context));
}

/** The plain bytes of a stored field, sealed by `sealBytes` or not. */
export async function openBytes(stored: ArrayBuffer | SealedBytes, context: string): Promise<ArrayBuffer> {
  if (!(stored instanceof SealedBytes)) return stored;
  if (!keys) throw new MirrorLockedError();
  return keys.openBytes(stored.raw, context);
}

// ---- Sealing a row ----

const SEALED = '$';
/** The row's fields that were sealed by `sealBytes`, stored beside the row's own seal. */
const SEALED_BYTES = '$b';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Row = Record<string, unknown>;

/** Row → bytes: JSON of its plain fields, then its binary fields (upload and download chunks, thumbnails) as they are. */
function encodeRow(row: Row): Uint8Array {
  const plain: Row = {};
  const binary: Array<[string, Uint8Array]> = [];
  for (const [name, value] of Object.entries(row)) {
    if (value instanceof ArrayBuffer) binary.push([name, new Uint8Array(value)]);
    else if (ArrayBuffer.isView(value)) throw new TypeError(`${name}: store an ArrayBuffer, not a view`);
    else plain[name] = value;
  }
  const head = encoder.encode(JSON.stringify([plain, binary.map(([name, bytes]) => [name, bytes.byteLength])]));
  const out = new Uint8Array(4 + head.byteLength + binary.reduce((n, [, b]) => n + b.byteLength, 0));
  new DataView(out.buffer).setUint32(0, head.byteLength);
  out.set(head, 4);
  let at = 4 + head.byteLength;
  for (const [, bytes] of binary) {
    out.set(bytes, at);
    at += bytes.byteLength;
  }
  return out;
}

function decodeRow(bytes: Uint8Array): Row {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
  const [plain, binary] = JSON.parse(decoder.decode(bytes.subarray(4, 4 + length))) as [Row, Array<[string, number]>];
  let at = 4 + length;
  for (const [name, size] of binary) {
    plain[name] = bytes.slice(at, at + size).buffer;
    at += size;
  }
  return plain;
}

// ---- Which index keys are tokens ----

/** The search words' index (list-keys.ts WORDS_INDEX): a word is found by the tokens of its prefixes. */
const WORDS_PATH = 'listKeys.words';
/**
 * Prefix lengths of a word that get a token. A typed word is looked up by the token of its
 * longest such prefix and the candidates are filtered in the page, as a search always is
 * (lib/view/windows.ts); three lengths keep the index small (the initial sync writes every row).
 */
const PREFIX_LENGTHS = [1, 2, 4] as const;

/** Index paths whose values name a patient, per table. */
const TOKENISED: Record<string, ReadonlySet<string>> = {
  conversations: new Set(['contact_id', 'group_id', WORDS_PATH]),
};

function wordTokens(sealer: Sealer, words: unknown): string[] {
  if (!Array.isArray(words)) return [];
  const out = new Set<string>();
  for (const word of words) {
    if (typeof word !== 'string') continue;
    for (const n of PREFIX_LENGTHS) if (word.length >= n) out.add(sealer.token(`w:${word.slice(0, n)}`));
    if (word.length < PREFIX_LENGTHS[PREFIX_LENGTHS.length - 1]) out.add(sealer.token(`w:${word}`));
  }
  return [...out];
}

function tokenOf(sealer: Sealer, path: string, value: unknown): unknown {
  if (path === WORDS_PATH) return wordTokens(sealer, value);
  return typeof value === 'string' ? sealer.token(`${path}:${value}`) : value;
}

/** A typed word's lookup token: its longest prefix that has one (exact for short words). */
function prefixToken(sealer: Sealer, typed: string): string {
  const n = [...PREFIX_LENGTHS].reverse().find((length) => typed.length >= length) ?? typed.length;
  return sealer.token(`w:${typed.slice(0, n)}`);
}

const MAX_STRING = String.fromCharCode(65535);

/** The range a query on a tokenised index really asks for, in tokens. */
function tokenRange(sealer: Sealer, path: string, range: DBCoreKeyRange): DBCoreKeyRange {
  const equal = (token: string): DBCoreKeyRange => ({ type: 1, lower: token, upper: token, lowerOpen: false, upperOpen: false });
  if (range.type === 1 && typeof range.lower === 'string') {
    return equal(path === WORDS_PATH ? prefixToken(sealer, range.lower) : sealer.token(`${path}:${range.lower}`));
  }
  // Dexie's startsWith(word): [word, word + U+FFFF].
  if (path === WORDS_PATH && range.type === 2 && typeof range.lower === 'string' && range.upper === range.lower + MAX_STRING) {
    return equal(prefixToken(sealer, range.lower));
  }
  throw new TypeError(`${path} holds keyed tokens: only equality (and startsWith on the words) can be asked of it`);
}

// ---- Paths ----

function getPath(row: Row, path: string): unknown {
  let value: unknown = row;
  for (const part of path.split('.')) value = value && typeof value === 'object' ? (value as Row)[part] : undefined;
  return value;
}

function setPath(row: Row, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = row;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Row;
  at[parts[parts.length - 1]] = value;
}

function pathsOf(keyPath: string | string[] | null | undefined): string[] {
  if (!keyPath) return [];
  return Array.isArray(keyPath) ? keyPath : [keyPath];
}

// ---- The middleware ----

function isSealed(value: unknown): value is Row & { [SEALED]: Uint8Array } {
  return !!value && typeof value === 'object' && (value as Row)[SEALED] instanceof Uint8Array;
}

function sealedTable(table: DBCoreTable): DBCoreTable {
  const name = table.name;
  const tokenised = TOKENISED[name] ?? new Set<string>();
  const primary = pathsOf(table.schema.primaryKey.keyPath);
  const clear = [...new Set([...primary, ...table.schema.indexes.flatMap((i) => pathsOf(i.keyPath))])];

  const seal = (value: unknown): unknown => {
    if (!value || typeof value !== 'object') return value;
    if (!keys) {
      if (required) throw new MirrorLockedError();
      return value;
    }
    let row = value as Row;
    let presealed: Row | null = null;
    for (const [field, v] of Object.entries(row)) {
      if (!(v instanceof SealedBytes)) continue;
      if (!presealed) {
        presealed = {};
        row = { ...row };
      }
      presealed[field] = v.raw;
      delete row[field];
    }
    const stored: Row = { [SEALED]: keys.seal(encodeRow(row), name) };
    if (presealed) stored[SEALED_BYTES] = presealed;
    for (const path of clear) {
      const v = getPath(row, path);
      if (v === undefined) continue;
      setPath(stored, path, tokenised.has(path) ? tokenOf(keys, path, v) : v);
    }
    return stored;
  };

  const open = (value: unknown): unknown => {
    if (!isSealed(value)) return value; // written before the lock existed, or with none
    if (!keys) {
      // A realm without keys that meets a sealed row (the service worker) writes nothing in clear from now on.
      required = true;
      throw new MirrorLockedError();
    }
    const row = decodeRow(keys.open(value[SEALED], name));
    const presealed = value[SEALED_BYTES];
    if (presealed && typeof presealed === 'object') for (const [field, raw] of Object.entries(presealed)) if (raw instanceof ArrayBuffer) row[field] = new SealedBytes(raw);
    // An auto-incremented key (the outbox's seq) was given by IndexedDB after sealing.
    for (const path of primary) if (getPath(row, path) === undefined && getPath(value, path) !== undefined) setPath(row, path, getPath(value, path));
    return row;
  };

  const query = <Q extends { query: DBCoreQuery }>(req: Q): Q => {
    const path = req.query.index.keyPath;
    if (!keys || typeof path !== 'string' || !tokenised.has(path)) return req;
    return { ...req, query: { ...req.query, range: tokenRange(keys, path, req.query.range) } };
  };

  return {
    ...table,
    mutate: (req) => {
      if (req.type !== 'add' && req.type !== 'put') return table.mutate(req);
      try {
        return table.mutate({ ...req, values: req.values.map(seal) });
      } catch (error) {
        return Promise.reject(error);
      }
    },
    get: (req) => table.get(req).then(open),
    getMany: (req) => table.getMany(req).then((values) => values.map(open)),
    query: (req) => {
      try {
        const rewritten = query(req);
        return table.query(rewritten).then((res) => (req.values ? { ...res, result: res.result.map(open) } : res));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    openCursor: (req) => {
      try {
        return table.openCursor(query(req)).then((cursor) => (req.values === false ? cursor : mapCursorValue(cursor, open)));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    count: (req) => {
      try {
        return table.count(query(req));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

/**
 * Registered by openSyncDb (and the thumbnails' database). Level 0.5: below list-keys.ts (which
 * derives the search words from the row in clear) and Dexie's hooks and virtual indexes, above its
 * observability and cache (which then see exactly what IndexedDB holds, tokens included).
 */
export const sealMiddleware: Middleware<DBCore> = {
  stack: 'dbcore',
  name: 'parley-seal',
  level: 0.5,
  create: (down) => ({ ...down, table: (name) => sealedTable(down.table(name)) }),
};

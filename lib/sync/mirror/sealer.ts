// The cipher behind seal.ts, with its keys: loaded when the device is unlocked (page) or started
// with keys (sync worker, service worker), never on the first screen. Why XChaCha20-Poly1305 in
// JavaScript and not WebCrypto's AES-GCM: see seal.ts.
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { MirrorKeys, Sealer } from './seal';

const NONCE = 24;
/** AES-GCM's iv: random per sealing; 2^32 sealings under one key stay far below its limit. */
const IV = 12;
const encoder = new TextEncoder();

/**
 * Tokens remembered per sealer: a list's words share their 1-, 2- and 4-letter prefixes, so an
 * initial sync of 10,000 conversations asks for a few thousand distinct tokens a hundred thousand
 * times (each an HMAC in JavaScript). Bounded: past it, forgotten and started again.
 */
const TOKEN_CACHE_SIZE = 20_000;

export function createSealer(keys: MirrorKeys): Sealer {
  const { rowKey, indexKey, bytesKey } = keys;
  // The key's inner and outer blocks hashed once; each token continues a copy.
  const keyed = hmac.create(sha256, indexKey);
  const tokens = new Map<string, string>();
  return {
    keys,
    seal(plain, context) {
      const nonce = crypto.getRandomValues(new Uint8Array(NONCE));
      const sealed = xchacha20poly1305(rowKey, nonce, encoder.encode(context)).encrypt(plain);
      const out = new Uint8Array(NONCE + sealed.byteLength);
      out.set(nonce);
      out.set(sealed, NONCE);
      return out;
    },
    open(sealed, context) {
      return xchacha20poly1305(rowKey, sealed.subarray(0, NONCE), encoder.encode(context)).decrypt(sealed.subarray(NONCE));
    },
    async sealBytes(plain, context) {
      const iv = crypto.getRandomValues(new Uint8Array(IV));
      const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: encoder.encode(context) }, bytesKey, plain);
      const out = new Uint8Array(IV + sealed.byteLength);
      out.set(iv);
      out.set(new Uint8Array(sealed), IV);
      return out.buffer;
    },
    openBytes(sealed, context) {
      return crypto.subtle.decrypt({ name: 'AES-GCM', iv: new Uint8Array(sealed, 0, IV), additionalData: encoder.encode(context) }, bytesKey, new Uint8Array(sealed, IV));
    },
    token(text) {
      const known = tokens.get(text);
      if (known !== undefined) return known;
      // 96 bits of HMAC-SHA-256: collisions between a user's ids and words are out of reach.
      const mac = keyed.clone().update(encoder.encode(text)).digest().subarray(0, 12);
      let raw = '';
      for (const byte of mac) raw += String.fromCharCode(byte);
      const token = btoa(raw).replace(/\+/g, '-').replace(/\//g, '_');
      if (tokens.size >= TOKEN_CACHE_SIZE) tokens.clear();
      tokens.set(text, token);
      return token;
    },
  };
}

/** HKDF-SHA-256 of the device's data key (raw bytes, lib/view/lock/keys.ts) into the mirror's three keys. */
export async function deriveMirrorKeys(dataKeyBytes: Uint8Array<ArrayBuffer>): Promise<MirrorKeys> {
  const subtle = globalThis.crypto.subtle;
  const base = await subtle.importKey('raw', dataKeyBytes, 'HKDF', false, ['deriveBits', 'deriveKey']);
  const derive = async (info: string) =>
    new Uint8Array(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(32), info: encoder.encode(info) }, base, 256));
  const bytesKey = await subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(32), info: encoder.encode('parley mirror bytes v1') },
    base,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
  return { rowKey: await derive('parley mirror rows v1'), indexKey: await derive('parley mirror index v1'), bytesKey };
}

// Ids and the clock in seconds: below both storage (blob keys) and domain (records), which import them.
import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 16 characters of [A-Za-z0-9] from a CSPRNG, without modulo bias (rejection sampling). */
export function newId(length = 16): string {
  let id = '';
  while (id.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) id += ALPHABET[byte % 62]; // 248 = 4 * 62: keeps every character equally likely
      if (id.length === length) break;
    }
  }
  return id;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

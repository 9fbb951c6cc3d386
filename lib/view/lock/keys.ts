// The device's key hierarchy (issue 28). One random data key (AES-GCM 256) protects what the app
// keeps of the user on this device; it is never stored as it is, only wrapped by each way the user
// can unlock:
// - a PIN (at least 6 digits), stretched with Argon2id (memory-hard: a copied disk cannot be tried
//   fast on GPUs) into a key-encryption key;
// - a passkey on this device (WebAuthn with the PRF extension): the authenticator's PRF output for
//   a random salt, through HKDF-SHA-256, is the key-encryption key. It never leaves the
//   authenticator without the user's fingerprint, face or screen lock.
// Setting or changing either re-wraps the data key; nothing else is encrypted again. A wrong PIN
// or the wrong passkey fails AES-GCM's authentication: the data key stays unknown.
// Pure over WebCrypto and an injected stretch function (Argon2id from hash-wasm, loaded only
// when a PIN is set or entered), so it runs the same in the page and in tests.

export interface PinWrap {
  method: 'pin';
  /** base64 of the Argon2id salt (16 bytes). */
  salt: string;
  /** Argon2id parameters, kept with the wrap so they can be raised for new wraps later. */
  params: StretchParams;
  iv: string;
  wrapped: string;
}

export interface PasskeyWrap {
  method: 'passkey';
  /** base64url of the credential id (the one the platform authenticator made for this device). */
  credentialId: string;
  /** base64 of the PRF input (32 bytes), asked for at every unlock. */
  prfSalt: string;
  iv: string;
  wrapped: string;
}

export type KeyWrap = PinWrap | PasskeyWrap;

export interface StretchParams {
  /** KiB of memory. */
  memorySize: number;
  iterations: number;
  parallelism: number;
}

/** ~0.3 s in a desktop browser, ~0.5-1 s on a mid-range phone (README: "Patient data on the device"). */
export const PIN_STRETCH: StretchParams = { memorySize: 32 * 1024, iterations: 2, parallelism: 1 };

/** Argon2id(password, salt) → 32 bytes. */
export type Stretch = (password: string, salt: Uint8Array, params: StretchParams) => Promise<Uint8Array>;

export const MIN_PIN_DIGITS = 6;

/** Why a PIN cannot be used, or null. */
export function pinProblem(pin: string): string | null {
  if (!/^\d+$/.test(pin)) return 'A PIN is digits only.';
  if (pin.length < MIN_PIN_DIGITS) return `A PIN has at least ${MIN_PIN_DIGITS} digits.`;
  if (/^(\d)\1+$/.test(pin) || '01234567890123456789'.includes(pin) || '98765432109876543210'.includes(pin)) {
    return 'Choose a PIN that is not one digit repeated or a run of digits.';
  }
  return null;
}

const subtle = () => globalThis.crypto.subtle;
const random = (n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n));

export function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

/** A new data key: 32 random bytes (raw, so it can be wrapped; imported for use by `dataKey`). */
export function newDataKeyBytes(): Uint8Array<ArrayBuffer> {
  return random(32);
}

/** The data key as a WebCrypto key that cannot be exported again. */
export function dataKey(bytes: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return subtle().importKey('raw', bytes, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

async function wrapWith(kek: CryptoKey, dataKeyBytes: Uint8Array<ArrayBuffer>): Promise<{ iv: string; wrapped: string }> {
  const iv = random(12);
  const wrapped = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv }, kek, dataKeyBytes));
  return { iv: toBase64(iv), wrapped: toBase64(wrapped) };
}

async function unwrapWith(kek: CryptoKey, wrap: { iv: string; wrapped: string }): Promise<Uint8Array<ArrayBuffer> | null> {
  try {
    return new Uint8Array(await subtle().decrypt({ name: 'AES-GCM', iv: fromBase64(wrap.iv) }, kek, fromBase64(wrap.wrapped)));
  } catch {
    return null; // the wrong PIN or passkey: the tag does not verify
  }
}

async function pinKek(pin: string, salt: Uint8Array, params: StretchParams, stretch: Stretch): Promise<CryptoKey> {
  const bytes = await stretch(pin, salt, params);
  return subtle().importKey('raw', new Uint8Array(bytes), 'AES-GCM', false, ['encrypt', 'decrypt']);
}

export async function wrapWithPin(dataKeyBytes: Uint8Array<ArrayBuffer>, pin: string, stretch: Stretch, params = PIN_STRETCH): Promise<PinWrap> {
  const salt = random(16);
  const kek = await pinKek(pin, salt, params, stretch);
  return { method: 'pin', salt: toBase64(salt), params, ...(await wrapWith(kek, dataKeyBytes)) };
}

/** The data key, or null for a wrong PIN. */
export async function unwrapWithPin(wrap: PinWrap, pin: string, stretch: Stretch): Promise<Uint8Array<ArrayBuffer> | null> {
  return unwrapWith(await pinKek(pin, fromBase64(wrap.salt), wrap.params, stretch), wrap);
}

/** HKDF-SHA-256 of the authenticator's PRF output: the passkey's key-encryption key. */
async function prfKek(prfOutput: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  const base = await subtle().importKey('raw', prfOutput, 'HKDF', false, ['deriveKey']);
  return subtle().deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(32), info: new TextEncoder().encode('parley device data key v1') },
    base,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

export async function wrapWithPasskey(dataKeyBytes: Uint8Array<ArrayBuffer>, credentialId: string, prfSalt: string, prfOutput: Uint8Array<ArrayBuffer>): Promise<PasskeyWrap> {
  return { method: 'passkey', credentialId, prfSalt, ...(await wrapWith(await prfKek(prfOutput), dataKeyBytes)) };
}

export async function unwrapWithPasskey(wrap: PasskeyWrap, prfOutput: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer> | null> {
  return unwrapWith(await prfKek(prfOutput), wrap);
}

/** Encrypts `text` under the data key: base64 of iv ‖ ciphertext. */
export async function seal(key: CryptoKey, text: string): Promise<string> {
  const iv = random(12);
  const sealed = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv }, key, new TextEncoder().encode(text)));
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv);
  out.set(sealed, iv.length);
  return toBase64(out);
}

export async function unseal(key: CryptoKey, sealed: string): Promise<string> {
  const bytes = fromBase64(sealed);
  const plain = await subtle().decrypt({ name: 'AES-GCM', iv: bytes.subarray(0, 12) }, key, bytes.subarray(12));
  return new TextDecoder().decode(plain);
}

/** Argon2id through hash-wasm, loaded on first use (it is WebAssembly: not in the first screen). */
export const argon2idStretch: Stretch = async (password, salt, params) => {
  const { argon2id } = await import('hash-wasm');
  return argon2id({ password, salt, ...params, hashLength: 32, outputType: 'binary' });
};

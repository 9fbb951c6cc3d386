// A passkey on this device as the unlock (WebAuthn, platform authenticator, PRF extension). The
// credential is not a sign-in to any server: only its PRF output for our random salt is used, as
// the key-encryption key's input (keys.ts). The authenticator gives it only after the user's
// fingerprint, face or screen lock (userVerification: required).
import { fromBase64, toBase64 } from './keys';

const random = (n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n));

function base64url(bytes: ArrayBuffer): string {
  return toBase64(new Uint8Array(bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/');
  return fromBase64(padded + '='.repeat((4 - (padded.length % 4)) % 4));
}

/** Whether this browser can make a platform passkey at all (PRF is known only once one is made). */
export async function platformPasskeyAvailable(): Promise<boolean> {
  try {
    return typeof PublicKeyCredential !== 'undefined' && (await PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable());
  } catch {
    return false;
  }
}

/** The PRF output a credential carries, when its authenticator evaluated one (an ArrayBuffer, as browsers give it). */
function prfOutput(credential: PublicKeyCredential): Uint8Array<ArrayBuffer> | null {
  const first = credential.getClientExtensionResults().prf?.results?.first;
  return first instanceof ArrayBuffer ? new Uint8Array(first) : null;
}

/** What navigator.credentials answered, when it is a passkey. */
const asPasskey = (credential: Credential | null) => (credential instanceof PublicKeyCredential ? credential : null);

/** The PRF output of `credentialId` for `salt`; null when the user cancelled or PRF is not there. */
export async function passkeyPrf(credentialId: string, salt: string): Promise<Uint8Array<ArrayBuffer> | null> {
  try {
    const credential = asPasskey(await navigator.credentials.get({
      publicKey: {
        challenge: random(32),
        rpId: location.hostname,
        allowCredentials: [{ type: 'public-key', id: fromBase64url(credentialId) }],
        userVerification: 'required',
        extensions: { prf: { eval: { first: fromBase64(salt) } } } satisfies AuthenticationExtensionsClientInputs,
      },
    }));
    return credential ? prfOutput(credential) : null;
  } catch {
    return null;
  }
}

/** Makes a passkey for this device; its id, salt and first PRF output, or null (cancelled, no PRF). */
export async function createPasskey(userName: string): Promise<{ credentialId: string; prfSalt: string; prfOutput: Uint8Array<ArrayBuffer> } | null> {
  const salt = random(32);
  let credential: PublicKeyCredential | null;
  try {
    credential = asPasskey(await navigator.credentials.create({
      publicKey: {
        challenge: random(32),
        rp: { name: 'Parley', id: location.hostname },
        user: { id: random(16), name: userName, displayName: userName },
        pubKeyCredParams: [
          { type: 'public-key', alg: -7 },
          { type: 'public-key', alg: -257 },
        ],
        authenticatorSelection: { authenticatorAttachment: 'platform', userVerification: 'required', residentKey: 'discouraged' },
        extensions: { prf: { eval: { first: salt } } } satisfies AuthenticationExtensionsClientInputs,
      },
    }));
  } catch {
    return null;
  }
  if (!credential) return null;
  const credentialId = base64url(credential.rawId);
  const prfSalt = toBase64(salt);
  const output = prfOutput(credential);
  if (output) return { credentialId, prfSalt, prfOutput: output };
  if (credential.getClientExtensionResults().prf?.enabled === false) return null;
  // Some authenticators evaluate the PRF only when asked with get(): one more touch.
  const asked = await passkeyPrf(credentialId, prfSalt);
  return asked ? { credentialId, prfSalt, prfOutput: asked } : null;
}

'use client';
import { lazy, Suspense, useState, type FormEvent } from 'react';

// Pairing with a code from another device: its own chunk, loaded when asked for (or opened from a QR code).
const PairWithCode = lazy(() => import('./PairWithCode').then((m) => ({ default: m.PairWithCode })));
// Single sign-on (GET /auth/oidc says whether the server offers it): its own chunk too.
const SingleSignOn = lazy(() => import('./SingleSignOn').then((m) => ({ default: m.SingleSignOn })));

/**
 * The token form. `onSubmit` checks the token and returns why it was refused, or null. `again`:
 * inside the "sign in again" dialog, where the local data (and unsynced changes) are kept.
 */
export function SignIn({
  onSubmit,
  again = false,
  notice = null,
  onSignOut,
  pairCode = null,
}: {
  onSubmit(token: string): Promise<string | null>;
  again?: boolean;
  /** Shown above the form, e.g. what the last sign-out removed. */
  notice?: string | null;
  /** Offered in the "sign in again" dialog: the way out when no token of this account is at hand. */
  onSignOut?: () => void;
  /** A code from another device (the QR code's ?pair=): sign in by pairing at once. */
  pairCode?: string | null;
}) {
  const [token, setToken] = useState('');
  const [pairing, setPairing] = useState(pairCode !== null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const value = token.trim();
    if (!value) return setError('Enter your access token.');
    setBusy(true);
    setError(null);
    const problem = await onSubmit(value).catch((e: unknown) => (e instanceof Error ? e.message : String(e)));
    setBusy(false);
    setError(problem);
  }

  return (
    <main className="signin">
      {!again && <h1>Parley</h1>}
      {notice && (
        <p className="notice" role="status" data-testid="signin-notice">
          {notice}
        </p>
      )}
      <p>
        {again
          ? 'The server no longer accepts your session’s token. Sign in with a new token of the same account: your unsynced changes are kept and will be sent once you do.'
          : 'Conversations and files, on your phone, with or without a network.'}
      </p>
      {!again && !pairing && (
        <Suspense fallback={null}>
          <SingleSignOn onToken={onSubmit} />
        </Suspense>
      )}
      {pairing && !again ? (
        <Suspense fallback={<p className="empty">Loading…</p>}>
          <PairWithCode initialCode={pairCode ?? ''} onToken={onSubmit} onCancel={() => setPairing(false)} />
        </Suspense>
      ) : (
      <form onSubmit={submit} noValidate>
        <label htmlFor="token">Access token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          spellCheck={false}
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-describedby={error ? 'token-error' : 'token-help'}
          aria-invalid={error ? true : undefined}
        />
        <p id="token-help" className="help">
          Your access token comes from whoever runs Parley for your team. If you don’t have one, ask your administrator for a token.
        </p>
        {error && (
          <p id="token-error" className="error" role="alert">
            {error}
          </p>
        )}
        <div className="actions">
          {onSignOut && (
            <button type="button" onClick={onSignOut}>
              Sign out…
            </button>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in'}
          </button>
        </div>
        {!again && (
          <p>
            <button type="button" className="link" onClick={() => setPairing(true)}>
              Have a code from another device?
            </button>
          </p>
        )}
      </form>
      )}
    </main>
  );
}

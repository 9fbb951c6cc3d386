'use client';
import { useState, type FormEvent } from 'react';
import { checkToken } from '@/lib/view/session';

const REASONS = {
  rejected: 'The server did not accept this token. Check it and try again.',
  unreachable: 'The server cannot be reached. Signing in needs the network once; try again when online.',
  server: 'The server answered with an error. Try again in a moment.',
};

export function SignIn({ onSignedIn, again = false }: { onSignedIn(token: string): void | Promise<void>; again?: boolean }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const value = token.trim();
    if (!value) return setError('Enter your access token.');
    setBusy(true);
    setError(null);
    const check = await checkToken(window.location.origin, value);
    setBusy(false);
    if (!check.ok) return setError(REASONS[check.reason]);
    await onSignedIn(value);
  }

  return (
    <main className="signin">
      <h1>Parley</h1>
      <p>{again ? 'Your session needs a new token. Your unsynced changes are kept and will be sent once you sign in.' : 'Conversations and files, on your phone, with or without a network.'}</p>
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
          The server prints one on its first start (“Sign in … with: pk_…”); an administrator can create more with <code>npm run token</code>.
        </p>
        {error && (
          <p id="token-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

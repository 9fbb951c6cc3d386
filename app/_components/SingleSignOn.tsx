'use client';
// Single sign-on on the sign-in screen (its own chunk, loaded after the first screen): the
// "Sign in with <name>" button when the server offers it (GET /auth/oidc), what went wrong when
// the provider sent the browser back with /?signin_error=<code>, and the last step of a sign-in:
// the one-time handoff id (/?signin=<id>) redeemed for the device token (POST /auth/oidc/handoff,
// with the HttpOnly cookie of this browser), which then goes the same way as a pasted token.
// /?signin= and /?signin_error= are read once and taken out of the address bar at once (the id is
// spent on use anyway; the token itself never travels in a URL). All of it here, off the first
// screen's scripts: the sign-in screen is part of them.
import { useEffect, useRef, useState } from 'react';

/** /?signin= and /?signin_error=, read once and removed from the address (history.replaceState). */
function takeFromAddress(): { handoff: string | null; error: string | null } {
  const params = new URLSearchParams(window.location.search);
  const found = { handoff: params.get('signin'), error: params.get('signin_error') };
  if (found.handoff !== null || found.error !== null) {
    params.delete('signin');
    params.delete('signin_error');
    const rest = params.toString();
    history.replaceState(history.state, '', `${window.location.pathname}${rest ? `?${rest}` : ''}`);
  }
  return found;
}

const NONE = { handoff: null, error: null };
/** What this page load found, until a sign-in screen has taken it (a later one, after a sign-out, finds nothing). */
let found: { handoff: string | null; error: string | null } | null = null;

const PROBLEMS: Record<string, (name: string) => string> = {
  refused: (name) => `The sign-in with ${name} was refused: its answer could not be verified. Try again, or ask your administrator.`,
  denied: (name) => `The sign-in was cancelled at ${name}.`,
  expired: () => 'The sign-in took too long, or was started in another browser. Try again.',
  state_mismatch: () => 'The sign-in did not match the one this browser started. Try again from here.',
  idp_unreachable: (name) => `${name} could not be reached. Try again in a moment, or sign in with a token.`,
  no_user: (name) => `${name} did not say who you are (no verified e-mail address for this account). Ask your administrator.`,
  handoff: () => 'The sign-in could not be completed: it expired or was already used. Try again.',
};

export function SingleSignOn({ onToken }: { onToken(token: string): Promise<string | null> }) {
  const [{ handoff, error }] = useState(() => (found ??= takeFromAddress()));
  useEffect(() => {
    found = NONE;
  }, []);
  const [name, setName] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(error);
  const [busy, setBusy] = useState(handoff !== null);
  const redeemed = useRef(false);

  useEffect(() => {
    let live = true;
    fetch('/auth/oidc', { cache: 'no-store' })
      .then(async (r) => (r.ok ? ((await r.json()) as { enabled?: boolean; name?: string }) : null))
      .then((answer) => live && answer?.enabled && setName(answer.name ?? 'single sign-on'))
      .catch(() => {});
    return () => {
      live = false;
    };
  }, []);

  useEffect(() => {
    if (!handoff || redeemed.current) return;
    redeemed.current = true; // once, even when effects run twice
    void (async () => {
      const r = await fetch('/auth/oidc/handoff', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ id: handoff }) }).catch(() => null);
      const token = r?.ok ? ((await r.json()) as { token?: string }).token : undefined;
      const refused = token ? await onToken(token).catch((e: unknown) => (e instanceof Error ? e.message : String(e))) : 'handoff';
      setBusy(false);
      setProblem(refused);
    })();
  }, [handoff, onToken]);

  const label = name ?? 'single sign-on';
  const message = problem === null ? null : (PROBLEMS[problem]?.(label) ?? problem);
  if (!name && !message && !busy) return null;
  return (
    <div className="sso">
      {busy && (
        <p role="status" data-testid="sso-busy">
          Signing you in…
        </p>
      )}
      {message && (
        <p className="error" role="alert" data-testid="sso-error">
          {message}
        </p>
      )}
      {name && !busy && (
        <p>
          <a className="button primary" href="/auth/oidc/start">
            Sign in with {name}
          </a>
        </p>
      )}
    </div>
  );
}

'use client';
// "Have a code from another device?": the new device redeems the code (or opens <origin>/?pair=<code>
// from the QR code), waits until the signed-in device allows it, then collects its own token with
// the secret it got (in a JSON body, never in a URL) and signs in with it. Loaded on first use.
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { collectToken, DevicesApiError, pairingProblem, redeemCode } from '@/lib/view/devices';

const POLL_MS = 1500;

export function PairWithCode({
  initialCode = '',
  onToken,
  onCancel,
}: {
  initialCode?: string;
  /** Signs in with the new token; returns why it was refused, or null. */
  onToken(token: string): Promise<string | null>;
  onCancel(): void;
}) {
  const [code, setCode] = useState(initialCode);
  const [error, setError] = useState<string | null>(null);
  const [waiting, setWaiting] = useState(false);
  const stopped = useRef(false);
  const started = useRef(false);

  useEffect(() => () => void (stopped.current = true), []);

  const pair = useCallback(
    async (typed: string) => {
      setError(null);
      setWaiting(true);
      try {
        const { pairing_id: id, secret } = await redeemCode(typed.trim());
        for (;;) {
          if (stopped.current) return;
          try {
            const { token } = await collectToken(id, secret);
            const problem = await onToken(token);
            if (problem) throw new Error(problem);
            return;
          } catch (e) {
            if (!(e instanceof DevicesApiError && e.code === 'pairing_pending')) throw e;
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
      } catch (e) {
        if (stopped.current) return;
        setWaiting(false);
        setError(e instanceof DevicesApiError || !(e instanceof Error) ? pairingProblem(e) : e.message);
      }
    },
    [onToken],
  );

  // Opened from the QR code: redeem at once.
  useEffect(() => {
    if (initialCode && !started.current) {
      started.current = true;
      void pair(initialCode);
    }
  }, [initialCode, pair]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!code.trim()) return setError('Enter the code shown on the other device.');
    void pair(code);
  }

  return (
    <section className="pair-with-code" aria-labelledby="pair-title">
      <h2 id="pair-title">Sign in with a code</h2>
      {waiting ? (
        <p role="status" data-testid="pair-waiting">
          Waiting for the other device to allow this one… Confirm there with “Allow”.
        </p>
      ) : (
        <form onSubmit={submit} noValidate>
          <label htmlFor="pair-code">Code from your other device</label>
          <input
            id="pair-code"
            name="pair-code"
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            value={code}
            onChange={(e) => setCode(e.target.value)}
            aria-describedby={error ? 'pair-error' : 'pair-help'}
            aria-invalid={error ? true : undefined}
          />
          <p id="pair-help" className="help">
            On a device where you are signed in: Device → Add a phone. It shows a QR code and this code.
          </p>
          {error && (
            <p id="pair-error" className="error" role="alert">
              {error}
            </p>
          )}
          <div className="actions">
            <button type="button" onClick={onCancel}>
              Use a token instead
            </button>
            <button type="submit" className="primary">
              Continue
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

'use client';
// "Add a phone" (Device screen): a one-use code valid 2 minutes, as a QR code (the app's address
// with ?pair=<code>; the qrcode package loads only here) and as text to type; then, once a device
// redeemed it, "Allow <Chrome on Android> to sign in as <user>?".
import { useCallback, useEffect, useState } from 'react';
import { createPairing, decidePairing, formatCode, pairingUrl, readPairing, type Pairing, type PairingCreated } from '@/lib/view/devices';
import { Dialog } from './Dialog';

const POLL_MS = 1500;

function QrCode({ text }: { text: string }) {
  const [svg, setSvg] = useState<string | null>(null);
  useEffect(() => {
    let cancelled = false;
    void import('qrcode')
      .then((qr) => qr.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }))
      .then((markup) => !cancelled && setSvg(markup))
      .catch(() => {});
    return () => void (cancelled = true);
  }, [text]);
  // The SVG is qrcode's own output for our URL (no user content): safe to inline.
  return svg ? <div className="pair-qr" role="img" aria-label="QR code to open Parley with this code" dangerouslySetInnerHTML={{ __html: svg }} /> : <div className="pair-qr" aria-hidden />;
}

export function AddPhone({ token, open, onClose }: { token: string; open: boolean; onClose(): void }) {
  const [created, setCreated] = useState<PairingCreated | null>(null);
  const [pairing, setPairing] = useState<Pairing | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const start = useCallback(async () => {
    setCreated(null);
    setPairing(null);
    setProblem(null);
    try {
      setCreated(await createPairing(token));
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  }, [token]);

  useEffect(() => {
    if (open) void start();
  }, [open, start]);

  // Follows the code until it is spent: redeemed (ask), then collected (done), denied or expired.
  const status = pairing?.status;
  useEffect(() => {
    if (!open || !created || status === 'collected' || status === 'denied' || status === 'expired') return;
    const timer = setInterval(() => {
      void readPairing(token, created.id).then(setPairing, () => {});
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [open, created, status, token]);

  async function decide(allow: boolean) {
    if (!created) return;
    setBusy(true);
    try {
      setPairing(await decidePairing(token, created.id, allow));
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  const label = pairing?.label ?? 'A device';
  return (
    <Dialog title="Add a phone" open={open} onClose={onClose} className="add-phone">
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {!created ? (
        !problem && <p className="empty">Asking the server for a code…</p>
      ) : status === 'redeemed' ? (
        <>
          <p data-testid="pair-question">
            <strong>
              Allow {label} to sign in as {pairing!.user}?
            </strong>{' '}
            It gets its own sign-in, which you can end from “Your devices”.
          </p>
          <div className="actions">
            <button type="button" onClick={() => void decide(false)} disabled={busy}>
              Deny
            </button>
            <button type="button" className="primary" onClick={() => void decide(true)} disabled={busy}>
              Allow
            </button>
          </div>
        </>
      ) : status === 'approved' || status === 'collected' ? (
        <p role="status" data-testid="pair-done">
          {status === 'collected' ? `${label} is signed in as ${pairing!.user}.` : `Allowed. ${label} is signing in…`}
        </p>
      ) : status === 'denied' ? (
        <p role="status">Denied: {label} was not let in.</p>
      ) : status === 'expired' ? (
        <>
          <p role="status">The code has expired.</p>
          <button type="button" onClick={() => void start()}>
            New code
          </button>
        </>
      ) : (
        <>
          <p>On the phone, scan this code with the camera, or open Parley and choose “Have a code from another device?”.</p>
          <QrCode text={pairingUrl(window.location.origin, created.code)} />
          <p className="pair-code" data-testid="pair-code">
            {formatCode(created.code)}
          </p>
          <p className="help">Valid for 2 minutes, once. You will be asked to allow the phone before it signs in.</p>
        </>
      )}
      <div className="actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}

'use client';
// "Your devices" (from the Device screen): where the user is signed in — label, when it signed
// in, when it was last seen, this one marked — and signing another one out, with or without
// erasing what it holds ("Sign out and erase": its token is wiped; at its next request the app
// there is told device_wiped and erases everything of the user). An extension of Parley's own
// server: against a server without it the screen says so (the Device screen does not link here).
import { useCallback, useEffect, useState } from 'react';
import { listDevices, signOutDevice, type Device } from '@/lib/view/devices';
import { fullTime, relativeTime } from '@/lib/view/format';
import { Dialog } from './Dialog';
import { navigate } from './router';
import { useSession } from './session-context';

export function DevicesScreen() {
  const { token } = useSession();
  const [devices, setDevices] = useState<Device[] | null | undefined>(undefined);
  const [problem, setProblem] = useState<string | null>(null);
  const [asked, setAsked] = useState<{ device: Device; wipe: boolean } | null>(null);
  const [busy, setBusy] = useState(false);

  const refresh = useCallback(async () => {
    try {
      setDevices(await listDevices(token));
      setProblem(null);
    } catch (e) {
      setProblem(e instanceof Error ? `The list could not be loaded: ${e.message}` : 'The list could not be loaded.');
    }
  }, [token]);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  async function confirmed() {
    if (!asked) return;
    setBusy(true);
    try {
      await signOutDevice(token, asked.device.id, asked.wipe);
      setAsked(null);
      await refresh();
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="screen" aria-labelledby="devices-title">
      <div className="screen-head">
        <button type="button" className="link" onClick={() => navigate({ name: 'device' })}>
          ‹ This device
        </button>
        <h1 id="devices-title">Your devices</h1>
      </div>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {devices === undefined ? (
        <p className="empty">Loading…</p>
      ) : devices === null ? (
        <p className="empty">This server does not list devices.</p>
      ) : devices.length === 0 ? (
        <p className="empty">No devices are signed in with a token of their own.</p>
      ) : (
        <ul className="devices" aria-label="Signed-in devices">
          {devices.map((d) => (
            <li key={d.id} data-testid="device-row">
              <p className="device-label">
                <strong>{d.label ?? 'A device'}</strong>
                {d.current && <span className="badge"> · This device</span>}
              </p>
              <p className="help">
                Signed in <span title={fullTime(d.created_at)}>{relativeTime(d.created_at)}</span> · Last seen{' '}
                {d.last_seen_at === null ? 'never' : <span title={fullTime(d.last_seen_at)}>{relativeTime(d.last_seen_at)}</span>}
              </p>
              {!d.current && (
                <div className="actions">
                  <button type="button" onClick={() => setAsked({ device: d, wipe: false })}>
                    Sign out
                  </button>
                  <button type="button" className="danger" onClick={() => setAsked({ device: d, wipe: true })}>
                    Sign out and erase
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <p className="help">To sign this device out, use “Sign out” at the top. Devices unused for a month are signed out by themselves.</p>
      <Dialog title={asked?.wipe ? 'Sign out and erase?' : 'Sign out?'} open={asked !== null} onClose={() => setAsked(null)}>
        {asked && (
          <p>
            {asked.wipe
              ? `${asked.device.label ?? 'The device'} is signed out and erases everything of yours it holds the next time it reaches the server. Changes it has not sent yet are lost.`
              : `${asked.device.label ?? 'The device'} is signed out: it can no longer reach your data on the server. What it holds stays on it until someone signs out there.`}
          </p>
        )}
        <div className="actions">
          <button type="button" onClick={() => setAsked(null)} disabled={busy}>
            Cancel
          </button>
          <button type="button" className="danger" onClick={() => void confirmed()} disabled={busy}>
            {asked?.wipe ? 'Sign out and erase' : 'Sign out'}
          </button>
        </div>
      </Dialog>
    </section>
  );
}

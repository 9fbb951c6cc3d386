'use client';
// The app: sign-in, the signed-in session (the sync worker and the local database), and the screens.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { connectSync, deleteSyncDb, readSyncStatus, type SyncConnection } from '@/lib/sync';
import { forgetToken, loadToken, saveToken, userKeyFor } from '@/lib/view/session';
import { ConversationScreen } from './ConversationScreen';
import { ConversationsScreen } from './ConversationsScreen';
import { Dialog } from './Dialog';
import { FilesScreen } from './FilesScreen';
import { hrefFor, navigate, useRoute, type Route } from './router';
import { SessionContext, type Session } from './session-context';
import { SignIn } from './SignIn';
import { StatusBar } from './StatusBar';
import { UpdatePrompt } from './UpdatePrompt';

export function ParleyApp() {
  const [token, setToken] = useState<string | null | undefined>(undefined);
  useEffect(() => setToken(loadToken(window.localStorage)), []);
  if (token === undefined) return <p className="empty">Loading…</p>;
  return (
    <>
      <UpdatePrompt />
      {token === null ? (
        <SignIn
          onSignedIn={(t) => {
            saveToken(window.localStorage, t);
            setToken(t);
          }}
        />
      ) : (
        <SignedIn
          token={token}
          onSignedOut={() => {
            forgetToken(window.localStorage);
            setToken(null);
            navigate({ name: 'conversations' }, { replace: true });
          }}
        />
      )}
    </>
  );
}

function SignedIn({ token, onSignedOut }: { token: string; onSignedOut(): void }) {
  const [connection, setConnection] = useState<SyncConnection | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [confirmSignOut, setConfirmSignOut] = useState<{ unsynced: number } | null>(null);
  const userKey = useMemo(() => userKeyFor(token), [token]);

  useEffect(() => {
    let current: SyncConnection | null = null;
    let cancelled = false;
    connectSync({ userKey, baseUrl: window.location.origin, token }).then(
      (c) => {
        if (cancelled) return c.close();
        setConnection((current = c));
        // Benchmarks and browser tests drive the same client and worker the UI uses.
        if (window.localStorage.getItem('parley:expose') === '1') Object.assign(window, { parley: c });
      },
      (e) => setFailure(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      cancelled = true;
      current?.close();
    };
  }, [userKey, token]);

  const askSignOut = useCallback(async () => {
    if (!connection) return;
    const status = await readSyncStatus(connection.db);
    setConfirmSignOut({ unsynced: status.pendingCount + status.failed.length });
  }, [connection]);

  const signOut = useCallback(async () => {
    connection?.close();
    await deleteSyncDb(userKey);
    onSignedOut();
  }, [connection, userKey, onSignedOut]);

  const session: Session | null = useMemo(
    () =>
      connection && {
        connection,
        signOut: () => void askSignOut(),
        signInAgain: async (next: string) => {
          saveToken(window.localStorage, next);
          await connection.worker.setToken(next);
        },
      },
    [connection, askSignOut],
  );

  if (failure) return <p className="error" role="alert">The local database could not be opened: {failure}</p>;
  if (!session) return <p className="empty">Opening your data…</p>;
  return (
    <SessionContext.Provider value={session}>
      <Shell />
      <Dialog title="Sign out?" open={confirmSignOut !== null} onClose={() => setConfirmSignOut(null)}>
        {confirmSignOut && confirmSignOut.unsynced > 0 ? (
          <p>
            <strong>
              {confirmSignOut.unsynced} change{confirmSignOut.unsynced === 1 ? ' has' : 's have'} not reached the server yet
            </strong>{' '}
            and will be lost. Signing out removes this device’s copy of your data.
          </p>
        ) : (
          <p>Everything is synced. Signing out removes this device’s copy of your data; it stays on the server.</p>
        )}
        <div className="actions">
          <button type="button" onClick={() => setConfirmSignOut(null)}>
            Cancel
          </button>
          <button type="button" className="danger" onClick={() => void signOut()}>
            Sign out{confirmSignOut?.unsynced ? ' and discard changes' : ''}
          </button>
        </div>
      </Dialog>
    </SessionContext.Provider>
  );
}

function NavLink({ route, current, children }: { route: Route; current: Route; children: string }) {
  const active = current.name === route.name || (route.name === 'conversations' && current.name === 'conversation');
  return (
    <a
      href={hrefFor(route)}
      aria-current={active ? 'page' : undefined}
      onClick={(e) => {
        e.preventDefault();
        navigate(route);
      }}
    >
      {children}
    </a>
  );
}

function Shell() {
  const route = useRoute();
  return (
    <SessionContext.Consumer>
      {(session) => (
        <div className="shell">
          <header className="topbar">
            <span className="brand">Parley</span>
            <nav aria-label="Main">
              <NavLink route={{ name: 'conversations' }} current={route}>
                Conversations
              </NavLink>
              <NavLink route={{ name: 'files' }} current={route}>
                Files
              </NavLink>
            </nav>
            <StatusBar />
            <button type="button" className="link" onClick={() => session?.signOut()}>
              Sign out
            </button>
          </header>
          <main>
            {route.name === 'conversation' ? (
              <ConversationScreen key={route.id} id={route.id} />
            ) : route.name === 'files' ? (
              <FilesScreen conversationId={route.conversationId} />
            ) : (
              <ConversationsScreen />
            )}
          </main>
        </div>
      )}
    </SessionContext.Consumer>
  );
}

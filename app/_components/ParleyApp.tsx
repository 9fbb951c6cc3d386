'use client';
// The app: sign-in, the signed-in session (the sync worker and the user's local database), and
// the screens. Which database, whose token, and what sign-out removes: lib/view/session.ts.
import { lazy, startTransition, Suspense, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
// Modules, not the '@/lib/sync' index: the bundler keeps all it re-exports (the engine too).
import { connectSync, type SyncConnection } from '@/lib/sync/connect';
import { loadClientModule, readSyncStatus } from '@/lib/sync/page';
import {
  describeRemoval,
  eraseDevice,
  finishRemovals,
  learnOwner,
  resumeSession,
  signIn,
  signInAgain,
  signInProblem,
  signOut,
  storedSessionDatabase,
  wipeSession,
  type DeviceDeps,
  type LocalSession,
} from '@/lib/view/session';
import { fetchPolicy, offlineExpiry, POLICY_KEY, REACHED_KEY, readLock, readPolicy, TokenVault } from '@/lib/view/lock/device-lock';
import { DeviceLock } from './lock/DeviceLock';
import { checkMirror } from '@/lib/view/mirror';
import { ConversationsScreen } from './ConversationsScreen';
import { adoptFirstRowsDb, startFirstRows } from './first-rows';
import { MirrorNotice } from './MirrorNotice';
import { loadNewConversationForm } from './NewConversation';
import { prefetchWhenIdle } from './preload';
import { loadRowMenuSheet } from './RowMenu';
import { hrefFor, navigate, useRoute, type Route } from './router';
import { SessionContext, type Session } from './session-context';
import { loadFailedChanges, StatusBar, SyncStatusProvider, useSyncStatus } from './StatusBar';
import { UpdatePrompt } from './UpdatePrompt';
import { useWide } from './useNarrow';

// Secondary screens load when first opened: the first screen (the conversations list) does not
// wait for them. They are fetched once it is idle (preload.ts), and the service worker precaches
// every chunk, so they open offline too.
const loadConversationScreen = () => import('./ConversationScreen');
const loadFilesScreen = () => import('./FilesScreen');
const ConversationScreen = lazy(() => loadConversationScreen().then((m) => ({ default: m.ConversationScreen })));
const FilesScreen = lazy(() => loadFilesScreen().then((m) => ({ default: m.FilesScreen })));
const StorageScreen = lazy(() => import('./StorageScreen').then((m) => ({ default: m.StorageScreen })));
const DevicesScreen = lazy(() => import('./DevicesScreen').then((m) => ({ default: m.DevicesScreen })));
// The viewer's own chunk; pdf.js and the FHIR/HL7 views load from it only for a file of their kind.
const loadFileScreen = () => import('./viewer/FileScreen');
const FileScreen = lazy(() => loadFileScreen().then((m) => ({ default: m.FileScreen })));
// The sign-in form: not the signed-in first screen's (the page shows BootShell's sign-in head meanwhile).
const loadSignIn = () => import('./SignIn');
const SignIn = lazy(() => loadSignIn().then((m) => ({ default: m.SignIn })));
const loadSignOutDialog = () => import('./SignOutDialog');
const SignOutDialog = lazy(() => loadSignOutDialog().then((m) => ({ default: m.SignOutDialog })));

// The list's first rows are read from this module's evaluation on (first-rows.ts), while React
// hydrates and renders the shell; not on a device with a lock, whose rows are sealed until it is
// unlocked. Read-only: the session itself is resumed once the page has hydrated (below).
if (typeof window !== 'undefined') {
  const database = storedSessionDatabase(window.localStorage);
  if (database && readLock(window.localStorage) === null) startFirstRows(database);
}

let vaultInstance: TokenVault | null = null;
/** localStorage for the session code, the token sealed once the device has a lock (device-lock.ts). */
function vault(): TokenVault {
  vaultInstance ??= new TokenVault(window.localStorage);
  return vaultInstance;
}

function device(): DeviceDeps {
  return {
    storage: vault(),
    fetch: (input, init) => fetch(input, init),
    baseUrl: window.location.origin,
    requestTimeoutMs: 30_000,
    caches: 'caches' in window ? window.caches : null,
  };
}

/** `boot`: what the page shows until the session is known (BootShell, from the server). */
export function ParleyApp({ boot }: { boot: ReactNode }) {
  const [session, setSession] = useState<LocalSession | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | null>(null);
  // Locked, unlocked, set up: the session follows what the vault holds. (Not a token's removal: a
  // sign-out says when it has finished removing the data.)
  useEffect(() => vault().onChange((change) => change !== 'token' && setSession(resumeSession(device()))), []);
  const erase = useCallback(async (why: string) => {
    await eraseDevice(device()).catch(() => {});
    vault().reset();
    setNotice(why);
    setSession(null);
    navigate({ name: 'conversations' }, { replace: true });
  }, []);
  const [pairCode, setPairCode] = useState<string | null>(null);
  useEffect(() => {
    // Opened from another device's QR code (/?pair=<code>): the code is read once and taken out of
    // the address (it is spent on redemption anyway; the token itself never travels in a URL).
    const params = new URLSearchParams(window.location.search);
    const pair = params.get('pair');
    if (pair) {
      params.delete('pair');
      const rest = params.toString();
      history.replaceState(history.state, '', `${window.location.pathname}${rest ? `?${rest}` : ''}`);
    }
    const resumed = resumeSession(device());
    if (pair && !resumed) setPairCode(pair);
    // The app's first render after hydration (BootShell stays on screen meanwhile), in slices.
    startTransition(() => setSession(resumed));
    void finishRemovals(device()).catch(() => {});
    // Another tab signed in again, signed out, or signed in as someone else: follow it.
    const onStorage = (event: StorageEvent) => {
      if (event.key === null || event.key.startsWith('parley:')) setSession(resumeSession(device()));
    };
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, []);
  if (session === undefined) return boot;
  return (
    <>
      <UpdatePrompt />
      <DeviceLock vault={vault()} erase={erase} userName={() => 'Parley on this device'}>
      {session === null ? (
        <Suspense fallback={boot}>
          <SignIn
            notice={notice}
            pairCode={pairCode}
            onSubmit={async (token) => {
              // The policy before the sign-in completes: a device that must lock never keeps the token in clear.
              const policy = await fetchPolicy(fetch, window.location.origin);
              if (policy) {
                window.localStorage.setItem(POLICY_KEY, JSON.stringify(policy));
                vault().requireLock(policy.lockAfterMs > 0);
              }
              const result = await signIn(device(), token);
              if (!result.ok) return signInProblem(result);
              setNotice(null);
              setSession(result.session);
              return null;
            }}
          />
        </Suspense>
      ) : (
        <SignedIn
          key={session.database}
          session={session}
          boot={boot}
          onSessionChange={setSession}
          onSignedOut={(message) => {
            vault().reset();
            setNotice(message);
            setSession(null);
            navigate({ name: 'conversations' }, { replace: true });
          }}
        />
      )}
      </DeviceLock>
    </>
  );
}

function SignedIn({
  session,
  boot,
  onSessionChange,
  onSignedOut,
}: {
  session: LocalSession;
  /** Shown while the connection opens (a moment: connectSync returns at once). */
  boot: ReactNode;
  onSessionChange(next: LocalSession): void;
  onSignedOut(message: string): void;
}) {
  const [connection, setConnection] = useState<SyncConnection | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [confirmSignOut, setConfirmSignOut] = useState<{ unsynced: number } | null>(null);
  const [signingOut, setSigningOut] = useState(false);
  const { database, token } = session;

  useEffect(() => {
    let cancelled = false;
    // Was the database cleared by the browser? (A notice, then.) Checked with the connection's own
    // database before the worker fills it, and at once: the check reads its marker before the
    // list's MirrorNotice can write it. The list shows what the database holds meanwhile; it does
    // not wait for the worker's code. The token at start; later tokens reach the worker through
    // setToken (below).
    const c = connectSync({ database, baseUrl: window.location.origin, token: session.token }, (db) => checkMirror(device(), database, db).catch(() => null), adoptFirstRowsDb(database));
    startTransition(() => setConnection(c));
    c.started.then(
      () => {
        if (cancelled) return;
        const preloaded = prefetchWhenIdle([loadConversationScreen, loadFilesScreen, loadFileScreen, loadClientModule, loadNewConversationForm, loadFailedChanges, loadRowMenuSheet, loadSignOutDialog, loadSignIn]);
        // Benchmarks and browser tests drive the same client and worker the UI uses.
        if (window.localStorage.getItem('parley:expose') === '1') Object.assign(window, { parley: c, parleyPreloaded: preloaded });
        // Through the worker: on the page the check would load zod with the first screen.
        void learnOwner({ ...device(), whoAmI: (t) => c.worker.whoAmI(window.location.origin, t) }, session).catch(() => {});
      },
      (e) => setFailure(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      cancelled = true;
      c.close();
    };
    // Only a different database means a different connection.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [database]);

  // A token accepted by "sign in again" (here or in another tab) resumes the paused sync.
  useEffect(() => {
    void connection?.worker.setToken(token);
  }, [connection, token]);

  const askSignOut = useCallback(async () => {
    if (!connection) return;
    const status = await readSyncStatus(connection.db);
    setConfirmSignOut({ unsynced: status.pendingCount + status.failed.length });
  }, [connection]);

  const confirmedSignOut = useCallback(async () => {
    setSigningOut(true);
    connection?.close();
    const report = await signOut(device(), session);
    onSignedOut(describeRemoval(report));
  }, [connection, session, onSignedOut]);

  // The organisation wiped this device (401 device_wiped): erased at once, as a sign-out that
  // discards everything, without asking — it is their decision, not the user's.
  const wiped = useCallback(async () => {
    connection?.close();
    await wipeSession(device(), session);
    onSignedOut(WIPED_NOTICE);
  }, [connection, session, onSignedOut]);

  const sessionValue: Session | null = useMemo(
    () =>
      connection && {
        connection,
        token,
        signOut: () => void askSignOut(),
        signInAgain: async (next: string) => {
          const result = await signInAgain(device(), session, connection.db, next);
          if (!result.ok) return signInProblem(result);
          onSessionChange(result.session);
          return null;
        },
      },
    [connection, token, askSignOut, session, onSessionChange],
  );

  if (failure) return <p className="error" role="alert">The local database could not be opened: {failure}</p>;
  if (!sessionValue) return boot;
  return (
    <SessionContext.Provider value={sessionValue}>
      <SyncStatusProvider>
        <WipeWatch onWiped={wiped} />
        <MirrorNotice database={database} />
        <Shell />
      </SyncStatusProvider>
      {confirmSignOut && (
        <Suspense fallback={null}>
          <SignOutDialog
            unsynced={confirmSignOut.unsynced}
            signingOut={signingOut}
            onCancel={() => setConfirmSignOut(null)}
            onConfirm={() => void confirmedSignOut()}
          />
        </Suspense>
      )}
    </SessionContext.Provider>
  );
}

function NavLink({ route, current, children }: { route: Route; current: Route; children: string }) {
  const active =
    current.name === route.name || (route.name === 'conversations' && current.name === 'conversation') || (route.name === 'device' && current.name === 'devices');
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

/**
 * Which conversation a wide screen shows beside the list: null for none (the list alone), undefined
 * when the route is not one of the two panes' (Files, Device, a file opened from the Files screen).
 */
function selectedConversation(route: Route): string | null | undefined {
  if (route.name === 'conversations') return null;
  if (route.name === 'conversation') return route.id;
  return route.name === 'file' ? route.conversationId : undefined;
}

function Shell() {
  const route = useRoute();
  // On a wide screen, two panes: the list (kept mounted, with its search and scroll, while
  // conversations are opened beside it, and when the window is resized across the width) and the
  // open conversation or its file, whose code loads when first opened. One screen at a time
  // below (a phone).
  const wide = useWide();
  const selected = wide ? selectedConversation(route) : undefined;
  const listShown = selected !== undefined || route.name === 'conversations';
  const loading = <p className="empty">Loading…</p>;
  const screen =
    route.name === 'conversation' ? (
      <ConversationScreen key={route.id} id={route.id} inPane={selected !== undefined} />
    ) : route.name === 'files' ? (
      <FilesScreen conversationId={route.conversationId} />
    ) : route.name === 'device' ? (
      <StorageScreen />
    ) : route.name === 'devices' ? (
      <DevicesScreen />
    ) : route.name === 'file' ? (
      <FileScreen key={route.id} id={route.id} conversationId={route.conversationId} />
    ) : (
      <section className="screen none-open" aria-labelledby="none-open-title">
        <h2 id="none-open-title">No conversation open</h2>
        <p className="empty">Choose one in the list to see its files here.</p>
      </section>
    );
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
              <NavLink route={{ name: 'device' }} current={route}>
                Device
              </NavLink>
            </nav>
            <StatusBar />
            <button type="button" className="link" onClick={() => session?.signOut()}>
              Sign out
            </button>
          </header>
          <main className={selected !== undefined ? 'two-pane' : undefined}>
            {listShown && <ConversationsScreen selected={selected} />}
            {selected !== undefined ? (
              <div className="detail-pane">
                <Suspense fallback={loading}>{screen}</Suspense>
              </div>
            ) : (
              !listShown && <Suspense fallback={loading}>{screen}</Suspense>
            )}
          </main>
        </div>
      )}
    </SessionContext.Consumer>
  );
}

export const WIPED_NOTICE = 'This device was signed out and cleared by your organisation. Everything of yours it held has been erased.';

/**
 * Erases the device once the sync status says the server answered device_wiped; notes when the
 * device last reached its server (offline expiry, DeviceLock) and warns in the 3 days before.
 */
function WipeWatch({ onWiped }: { onWiped(): Promise<void> }) {
  const status = useSyncStatus();
  const started = useRef(false);
  useEffect(() => {
    if (!status?.deviceWiped || started.current) return;
    started.current = true;
    void onWiped();
  }, [status?.deviceWiped, onWiped]);
  // A sync that completes while the app is open is the server reached; the time stored with the
  // status when the app opens is one that was recorded then already (or before this was written).
  const loaded = status !== undefined;
  const lastSyncAt = status?.lastSyncAt ?? null;
  const openedWith = useRef<number | null | undefined>(undefined);
  useEffect(() => {
    if (!loaded) return;
    if (openedWith.current === undefined) {
      openedWith.current = lastSyncAt;
      if (lastSyncAt !== null && window.localStorage.getItem(REACHED_KEY) === null) window.localStorage.setItem(REACHED_KEY, String(lastSyncAt));
      return;
    }
    if (lastSyncAt !== null && lastSyncAt !== openedWith.current) window.localStorage.setItem(REACHED_KEY, String(lastSyncAt));
  }, [loaded, lastSyncAt]);
  const policy = readPolicy(window.localStorage);
  const reached = Number(window.localStorage.getItem(REACHED_KEY) ?? NaN);
  const { warnUntil } = offlineExpiry(Number.isFinite(reached) ? reached : null, Date.now(), policy?.maxOfflineMs ?? 0);
  if (warnUntil === null) return null;
  return (
    <p className="notice" role="status" data-testid="offline-expiry">
      This device has not reached the server since {new Date(reached).toLocaleString()}. Unless it syncs before {new Date(warnUntil).toLocaleString()},
      its copy of your data will be erased.
    </p>
  );
}

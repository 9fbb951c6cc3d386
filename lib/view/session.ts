// The signed-in session on this device: the token and the local database it works on, kept in
// localStorage. The database belongs to a USER, not to a token: a new token of the same user
// keeps the database (and its unsynced changes); a token of anyone else never gets to send them.
// Everything here is plain TypeScript over injected storage, fetch and IndexedDB, so it is tested
// against the real server (tests/sync/identity.test.ts).
import type { DexieOptions } from 'dexie';
import { addReports, anonymousDatabaseName, type CheckFailure, type FetchLike, forgetOpenedFiles, legacyDatabaseName, loadIdentity, NOTHING_REMOVED, openSyncDb, type ParleyDb, queuedChangeCount, type RemovalReport, removeDatabase, userDatabaseName, type WhoAmI } from '../sync/page';
import { entryFor, readRegistry, register, unregister, type LocalDatabase, type StorageLike } from './device';
import { countOf as plural, humanSize } from './format';
import { TOKEN_KEY } from './lock/device-lock';

export type { StorageLike } from './device';

// The identity checks validate answers with the shared zod schemas: loaded (loadIdentity) when a
// check is due (signing in, or a database whose owner is unknown), not with the first screen.

const DATABASE_KEY = 'parley:database';

export interface LocalSession {
  token: string;
  /** IndexedDB name of the user's database. */
  database: string;
}

/** What the session logic needs from the outside world (the browser's, or a test's). */
export interface DeviceDeps {
  storage: StorageLike;
  fetch: FetchLike;
  /** The origin serving /v1 (location.origin in the app). */
  baseUrl: string;
  /** Per request of the identity checks; an answer that does not come in time is "unreachable". */
  requestTimeoutMs?: number;
  /** Tests hand in fake-indexeddb here. */
  dexie?: DexieOptions;
  /** Asks whose a token is somewhere the schemas are loaded already (the sync worker); default: here. */
  whoAmI?: (token: string) => Promise<WhoAmI>;
  /** window.caches; null where there is none (plain-http LAN origins). */
  caches?: CacheStorage | null;
}

export function loadToken(storage: StorageLike): string | null {
  return storage.getItem(TOKEN_KEY);
}

function save(storage: StorageLike, session: LocalSession): void {
  // Database first: a token without it would be taken for an earlier version's session.
  storage.setItem(DATABASE_KEY, session.database);
  storage.setItem(TOKEN_KEY, session.token);
}

function forget(storage: StorageLike): void {
  storage.removeItem(TOKEN_KEY);
  storage.removeItem(DATABASE_KEY);
}

/**
 * The database of the session saved on this device, read without changing anything (resumeSession
 * may record or forget): null where resumeSession would not resume one as it stands (no token, an
 * earlier version's session, a sign-out being finished).
 */
export function storedSessionDatabase(storage: StorageLike): string | null {
  const database = loadToken(storage) ? storage.getItem(DATABASE_KEY) : null;
  return database && entryFor(storage, database)?.removing !== true ? database : null;
}

/**
 * The session saved on this device, if any; needs no network. A token saved by an earlier
 * version (databases were named after the token) adopts that database, outbox and all.
 */
export function resumeSession(deps: DeviceDeps): LocalSession | null {
  const token = loadToken(deps.storage);
  if (!token) return null;
  const database = deps.storage.getItem(DATABASE_KEY);
  if (database) {
    const entry = entryFor(deps.storage, database);
    if (entry?.removing) {
      // A sign-out was interrupted after it began removing this database: it stays signed out.
      forget(deps.storage);
      return null;
    }
    if (!entry) register(deps.storage, { name: database, origin: deps.baseUrl, userId: null });
    return { token, database };
  }
  const session = { token, database: legacyDatabaseName(token) };
  register(deps.storage, { name: session.database, origin: deps.baseUrl, userId: null, legacy: true });
  save(deps.storage, session);
  return session;
}

/**
 * Records whose database this is, where that is still unknown (an adopted one, or one made
 * against a server without /v1/me that has it now). Best effort: offline it waits for next time.
 * The session's token is the one this database was made or accepted with, so its user is the owner.
 */
export async function learnOwner(deps: DeviceDeps, session: LocalSession): Promise<void> {
  const entry = entryFor(deps.storage, session.database);
  if (!entry || entry.userId !== null) return;
  const who = deps.whoAmI ? await deps.whoAmI(session.token) : await (await loadIdentity()).whoAmI(deps, session.token);
  const current = entryFor(deps.storage, session.database);
  if (who.kind === 'user' && current && current.userId === null) register(deps.storage, { ...current, userId: who.id });
}

export type SignInResult = { ok: true; session: LocalSession } | { ok: false; reason: CheckFailure };

/** A fresh sign-in: checks the token, then finds the user's database on this device or names a new one. */
export async function signIn(deps: DeviceDeps, token: string): Promise<SignInResult> {
  await finishRemovals(deps);
  const { whoAmI, probeIdsOf, probeSameUser } = await loadIdentity();
  const who = await whoAmI(deps, token);
  if (who.kind !== 'user' && who.kind !== 'unnamed') return { ok: false, reason: who.kind };
  const userId = who.kind === 'user' ? who.id : null;
  const here = readRegistry(deps.storage).filter((e) => e.origin === deps.baseUrl);
  let entry = userId === null ? undefined : here.find((e) => e.userId === userId);
  // A database whose user is unknown is this user's only if the server proves it.
  for (const candidate of here.filter((e) => e.userId === null)) {
    if (entry) break;
    const db = openSyncDb(candidate.name, deps.dexie);
    const ids = await probeIdsOf(db).finally(() => db.close());
    const probe = await probeSameUser(deps, token, ids);
    if (probe.kind === 'same') entry = candidate;
    // Unanswered: rather ask again than start an empty database beside the user's own.
    else if (probe.kind !== 'other' && probe.kind !== 'nothing-to-probe') return { ok: false, reason: probe.kind };
  }
  const name = entry?.name ?? (userId === null ? anonymousDatabaseName() : userDatabaseName(deps.baseUrl, userId));
  register(deps.storage, { ...entry, name, origin: deps.baseUrl, userId: entry?.userId ?? userId, removing: undefined });
  const session = { token, database: name };
  save(deps.storage, session);
  return { ok: true, session };
}

export type SignInAgainResult =
  | { ok: true; session: LocalSession }
  | { ok: false; reason: CheckFailure }
  /** The token is someone else's: `by` says how we know. Nothing was sent. */
  | { ok: false; reason: 'other-user'; by: 'me' | 'probe'; unsynced: number }
  /** Neither /v1/me nor a probe could tell, and there are unsynced changes: refused to be safe. */
  | { ok: false; reason: 'unproven'; unsynced: number };

/**
 * "Sign in again" after the server stopped accepting the session's token. Accepted only for
 * the same user as the session's database, so its unsynced changes can never be replayed into
 * another account. On success the token is saved; the caller hands it to the sync worker.
 */
export async function signInAgain(deps: DeviceDeps, session: LocalSession, db: ParleyDb, token: string): Promise<SignInAgainResult> {
  const entry: LocalDatabase = entryFor(deps.storage, session.database) ?? { name: session.database, origin: deps.baseUrl, userId: null };
  const { whoAmI, probeIdsOf, probeSameUser } = await loadIdentity();
  const who = await whoAmI(deps, token);
  if (who.kind !== 'user' && who.kind !== 'unnamed') return { ok: false, reason: who.kind };
  let same: boolean | null;
  let by: 'me' | 'probe' = 'me';
  if (who.kind === 'user' && entry.userId !== null) {
    same = who.id === entry.userId;
  } else {
    by = 'probe';
    const probe = await probeSameUser(deps, token, await probeIdsOf(db));
    if (probe.kind === 'same' || probe.kind === 'other') same = probe.kind === 'same';
    else if (probe.kind === 'nothing-to-probe') same = null;
    else return { ok: false, reason: probe.kind };
  }
  const unsynced = await queuedChangeCount(db);
  if (same === false) return { ok: false, reason: 'other-user', by, unsynced };
  // Unproven but nothing unsynced: the database holds nothing from the server either (no
  // conversation to probe with), so nothing can cross accounts.
  if (same === null && unsynced > 0) return { ok: false, reason: 'unproven', unsynced };
  if (who.kind === 'user' && entry.userId === null) register(deps.storage, { ...entry, userId: who.id });
  const next = { token, database: session.database };
  save(deps.storage, next);
  return { ok: true, session: next };
}

/**
 * Sign-out: removes every local database of the session's user (all registered to them, the
 * adopted legacy one included), the opened-files cache, and the session. Returns what went.
 */
export async function signOut(deps: DeviceDeps, session: LocalSession): Promise<RemovalReport> {
  const owner = entryFor(deps.storage, session.database)?.userId ?? null;
  const doomed = readRegistry(deps.storage).filter(
    (e) => e.name === session.database || (owner !== null && e.origin === deps.baseUrl && e.userId === owner),
  );
  if (!doomed.some((e) => e.name === session.database)) doomed.push({ name: session.database, origin: deps.baseUrl, userId: owner });
  // Marked first: if the app is closed half-way, the next start finishes the job.
  for (const entry of doomed) register(deps.storage, { ...entry, removing: true });
  forget(deps.storage);
  return removeMarked(deps);
}

/**
 * Everything of this origin's users on the device goes: every registered database, the opened
 * files, the session. For a wipe the user did not choose (the organisation's, too many wrong
 * PINs, too long offline): no session needed, nothing asked.
 */
export async function eraseDevice(deps: DeviceDeps): Promise<RemovalReport> {
  const entries = readRegistry(deps.storage).filter((e) => e.origin === deps.baseUrl);
  const current = deps.storage.getItem(DATABASE_KEY);
  if (current && !entries.some((e) => e.name === current)) entries.push({ name: current, origin: deps.baseUrl, userId: null });
  for (const entry of entries) register(deps.storage, { ...entry, removing: true });
  forget(deps.storage);
  const report = await removeMarked(deps);
  await clearSiteStorage(deps);
  return report;
}

/**
 * The organisation wiped this device (401 device_wiped): the session's data goes as at a sign-out
 * that discards everything, and so does what the deleted databases leave in IndexedDB's files.
 */
export async function wipeSession(deps: DeviceDeps, session: LocalSession): Promise<RemovalReport> {
  const report = await signOut(deps, session);
  await clearSiteStorage(deps);
  return report;
}

/**
 * Deleting a database leaves its values in IndexedDB's files (Chromium's LevelDB) until they are
 * compacted, which a page cannot ask for: the app's server answers `Clear-Site-Data: "storage"`,
 * and the browser deletes the origin's storage folders (with the service worker's registration,
 * registered again at the next load). Offline, or a server that says no: the databases are
 * deleted all the same, and the rest waits for the browser's compaction (docs/patient-data.md).
 * Used where the device is erased (eraseDevice) or wiped by the organisation, once no other
 * user's database is left on it.
 */
async function clearSiteStorage(deps: DeviceDeps): Promise<void> {
  // Another user's database on this device (their unsynced changes): theirs to erase, not this.
  if (readRegistry(deps.storage).length > 0) return;
  try {
    await deps.fetch(new URL('/device-policy/clear', deps.baseUrl).toString(), { method: 'POST', headers: { 'x-parley-clear': '1' }, cache: 'no-store' });
  } catch {
    /* offline: nothing more can be done from here */
  }
}

/** Finishes a sign-out that was interrupted (called at start and before signing in). */
export async function finishRemovals(deps: DeviceDeps): Promise<void> {
  if (readRegistry(deps.storage).some((e) => e.removing)) await removeMarked(deps);
}

async function removeMarked(deps: DeviceDeps): Promise<RemovalReport> {
  let report = { ...NOTHING_REMOVED, openedDocuments: await forgetOpenedFiles(deps.caches ?? null, deps.dexie) };
  for (const entry of readRegistry(deps.storage).filter((e) => e.removing)) {
    report = addReports(report, await removeDatabase(entry.name, deps.dexie));
    unregister(deps.storage, [entry.name]);
  }
  return report;
}

// ---- What the screens say. ----

// Counts: countOf (format.ts), thousands grouped like every count on every screen.

export function signInProblem(result: Exclude<SignInAgainResult, { ok: true }>): string {
  switch (result.reason) {
    case 'rejected':
      return 'The server did not accept this token. Check it and try again.';
    case 'unreachable':
      return 'The server cannot be reached. Signing in needs the network once; try again when online.';
    case 'server':
      return 'The server answered with an error. Try again in a moment.';
    case 'other-user': {
      const why =
        result.by === 'me'
          ? 'This token belongs to a different account than the one signed in on this device.'
          : 'This token belongs to a different account: the server does not know the conversations on this device under it.';
      return `${why} ${kept(result.unsynced)}`;
    }
    case 'unproven':
      return (
        'The server cannot confirm that this token belongs to the account you were signed in with ' +
        '(it cannot say whose a token is, and this device holds no conversation from it to check with). ' +
        kept(result.unsynced)
      );
  }
}

function kept(unsynced: number): string {
  if (unsynced === 0) return 'Use a token of that account, or sign out first.';
  return (
    `Your ${plural(unsynced, 'unsynced change')} belong${unsynced === 1 ? 's' : ''} to the account you were signed in with; ` +
    'nothing was sent and they are kept. Use a token of that account, or sign out, which discards them.'
  );
}

export function describeRemoval(report: RemovalReport): string {
  const parts = [
    plural(report.conversations, 'conversation'),
    plural(report.files, 'file'),
    plural(report.openedDocuments, 'opened document'),
    plural(report.unsyncedChanges, 'unsynced change'),
  ];
  const bytes = report.uploadBytes > 0 ? ` (with ${humanSize(report.uploadBytes)} of files waiting to upload)` : '';
  return `Removed from this device: ${parts.join(', ')}${bytes}.`;
}

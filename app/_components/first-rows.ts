'use client';
// The list's first rows, read from the moment the session is known (issue 30: first rows within a
// breath of the floor). Between that moment and the list's first render the page renders the
// signed-in shell twice (the session, then the connection) and loads the sync worker's code; the
// database's open and the first window's read wait on IndexedDB, not on this thread, so they run
// meanwhile. The connection adopts the database opened here (one open), and the list starts from
// the rows read here when it asks for the same window (its default one) instead of a "Loading…"
// and a read of its own. It still reads again once mounted: what changed in between is not lost.
import { openConnectionDb } from '@/lib/sync/connect';
import type { ParleyDb } from '@/lib/sync/page';
import { DEFAULT_FILTERS } from '@/lib/view/conversations';
import { readConversationWindow, type ConversationWindow } from '@/lib/view/windows';
import { LIST_WINDOW_SIZE } from './useListWindow';

interface HeadStart {
  database: string;
  db: ParleyDb;
  rows: Promise<ConversationWindow | undefined>;
  /** The rows once read (undefined before, or if the read failed). */
  read?: ConversationWindow;
  /** Whether the connection took the database (else it is closed when another head start replaces it). */
  adopted: boolean;
}

let current: HeadStart | null = null;

/**
 * Opens `database` and reads the list's default window. Call only where the rows can be read as
 * they are (no lock, or the device unlocked): a locked device's rows are sealed.
 */
export function startFirstRows(database: string): void {
  if (current?.database === database) return;
  if (current && !current.adopted) current.db.close();
  const db = openConnectionDb(database);
  const start: HeadStart = { database, db, adopted: false, rows: Promise.resolve(undefined) };
  // As the list asks for its default window (ConversationsScreen: `near` once the empty search has settled).
  start.rows = readConversationWindow(db, DEFAULT_FILTERS, null, 0, LIST_WINDOW_SIZE, { near: true }).then(
    (rows) => (start.read = rows),
    // The list reads for itself (and shows what went wrong, if anything does).
    () => undefined,
  );
  current = start;
}

/** The database opened for `database` by startFirstRows, now the connection's; undefined if none was. */
export function adoptFirstRowsDb(database: string): ParleyDb | undefined {
  // Once: a connection closed and made again (React's development double effects) opens its own.
  if (current?.database !== database || current.adopted) return undefined;
  current.adopted = true;
  return current.db;
}

/** What the list starts from: the rows if already read (its first render), else their read. */
export interface FirstRows {
  read?: ConversationWindow;
  rows: Promise<ConversationWindow | undefined>;
}

/**
 * The first rows read on `db` (the connection's) for the list's default window, if they were. The
 * list's first render shows them; its first run takes them (`takeFirstRows`), so a list mounted
 * again later reads for itself rather than showing rows read long before.
 */
export function firstRows(db: ParleyDb): FirstRows | undefined {
  return current?.db === db ? { read: current.read, rows: current.rows } : undefined;
}

export function takeFirstRows(db: ParleyDb): void {
  if (current?.db === db) current = null;
}

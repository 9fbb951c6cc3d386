'use client';
import { createContext, useCallback, useContext } from 'react';
import type { SyncConnection } from '@/lib/sync/connect';

export interface Session {
  connection: SyncConnection;
  /** The session's bearer token (the devices and pairing screens call the server with it). */
  token: string;
  signOut(): void;
  /**
   * Replace the token after the server refused the old one. Accepted only for the same user as
   * the local data; otherwise nothing changes. Returns why it was refused, or null.
   */
  signInAgain(token: string): Promise<string | null>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in session');
  return session;
}

/** "Sync now", as the status bar's button and a list's pull to refresh ask for it. */
export function useSyncNow(): () => Promise<unknown> {
  const { connection } = useSession();
  return useCallback(() => connection.worker.syncNow(), [connection]);
}

// Remote wipe in proxy mode: the tokens are the upstream's, so the proxy cannot mark them; the
// operator tells it which to wipe (`npm run token -- revoke <token> --wipe` with the proxy's
// DATA_DIR), and it answers 401 device_wiped for them itself, before forwarding anything. The
// list is the proxy's DATA_DIR database (the service's `tokens` table, hashes only), read again
// at most every REREAD_MS; there is nothing to read until the CLI has made that database.
import fs from 'node:fs';
import path from 'node:path';
import { hashToken, wipedTokenHashes } from '../api/domain/tokens';
import { openDb, SQLITE_FILE, type OpenedDb } from '../api/storage/db';

export const REREAD_MS = 5_000;

export class WipedTokens {
  private hashes = new Set<string>();
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;
  private opened: OpenedDb | null = null;
  private closed = false;

  constructor(
    private readonly dataDir: string,
    private readonly log: Pick<Console, 'error'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the bearer token of `authorization` was wiped. */
  async has(authorization: string | null): Promise<boolean> {
    const token = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (!token) return false;
    if (this.now() - this.readAt >= REREAD_MS) await (this.reading ??= this.read().finally(() => (this.reading = null)));
    return this.hashes.has(hashToken(token));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reading?.catch(() => {});
    const opened = this.opened;
    this.opened = null;
    await opened?.close();
  }

  private async read(): Promise<void> {
    try {
      if (!this.opened) {
        if (this.closed || !fs.existsSync(path.join(this.dataDir, SQLITE_FILE))) return;
        this.opened = await openDb({ dataDir: this.dataDir });
      }
      this.hashes = await wipedTokenHashes(this.opened.db);
    } catch (error) {
      // Keeps the list it had: a wipe already known is never forgotten for a read that failed.
      this.log.error('[parley] proxy: reading the wiped tokens failed:', error);
    } finally {
      this.readAt = this.now();
    }
  }
}

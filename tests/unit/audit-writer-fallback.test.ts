// @vitest-environment node
// The audit trail's writer thread may not start (a bundle where better-sqlite3 cannot be found from
// its code, as Next's route handlers' server chunk) or may die: the rows then go through the
// request thread's connection, once told, never lost and never retried every second forever.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionAuditWriter, withFallback, WriterGoneError, type AuditTuple, type AuditWriter } from '../../lib/api/storage/audit-writer';
import { openDb, sqliteFileOf } from '../../lib/api/storage/db';

const row = (n: number): AuditTuple => [1_700_000_000 + n, 'alice', null, 'read', 'conversation', `C${String(n).padStart(15, '0')}`, null, '127.0.0.1', '200'];

describe('the audit writer falls back to the request thread', () => {
  it('when the thread is gone: the rows are written on the connection, and it is said once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-audit-fallback-'));
    const opened = await openDb({ dataDir: dir });
    const db = opened.db;
    const dead: AuditWriter = { write: () => Promise.reject(new WriterGoneError('the audit writer thread has stopped')), close: async () => {} };
    const told: string[] = [];
    const writer = withFallback(dead, connectionAuditWriter(db), (e) => told.push(e.message));
    await writer.write([row(1), row(2)]);
    await writer.write([row(3)]);
    expect(told).toEqual(['the audit writer thread has stopped']);
    const stored = new Database(sqliteFileOf(db)!.path, { readonly: true }).prepare('select at, user_id, token_id, object_id, outcome from audit order by at').all();
    expect(stored).toEqual([1, 2, 3].map((n) => ({ at: 1_700_000_000 + n, user_id: 'alice', token_id: null, object_id: row(n)[5], outcome: '200' })));
    await opened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a refusal of the database is not a gone thread: it is the caller\'s to keep and retry', async () => {
    const full: AuditWriter = { write: () => Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })), close: async () => {} };
    const told: string[] = [];
    const fallback: AuditWriter = { write: () => Promise.reject(new Error('not used')), close: async () => {} };
    await expect(withFallback(full, fallback, (e) => told.push(e.message)).write([row(1)])).rejects.toThrow('disk is full');
    expect(told).toEqual([]);
  });
});

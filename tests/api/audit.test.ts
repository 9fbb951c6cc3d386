// @vitest-environment node
// The audit trail (issue 29 item 4): who did what to which record, append-only, in the service's
// database. A write's row commits with the change (present as soon as its answer has come); reads
// are written in batches (polled for, never slept on). Never contents: no file names, no contact
// ids. `npm run audit` prints it; rows older than AUDIT_RETENTION_DAYS are pruned.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createToken } from '../../lib/api/domain/tokens';
import { recordAudit, type AuditRow } from '../../lib/api/domain/audit';
import { formatTable, parseArguments, parseSince } from '../../lib/api/domain/audit-report';
import { client } from '../helpers/api';
import { runCommand } from '../helpers/cli';
import { startTarget } from '../helpers/target';
import { TEST_TOKENS, type TestServer } from '../helpers/server';

const run = (script: 'audit.ts' | 'token.ts', args: string[], env: Record<string, string>) => runCommand(script === 'audit.ts' ? 'audit' : 'token', args, env);

let server: TestServer;
let env: Record<string, string>;
const alice = client(() => server.baseUrl, TEST_TOKENS.alice);
const bob = client(() => server.baseUrl, TEST_TOKENS.bob);

// Contents that must never reach the trail.
const CONTACT = 'contact-secret-7731';
const FILENAME = 'ward-notes-secret.txt';
const RENAMED = 'renamed-secret-name.txt';

const all = async (): Promise<AuditRow[]> => (await server.service.db.selectFrom('audit').selectAll().orderBy('seq').execute()) as AuditRow[];
const find = async (match: Partial<AuditRow>) => (await all()).filter((r) => Object.entries(match).every(([k, v]) => (r as never)[k] === v));
/** Reads are written in batches: poll until the row is there (no fixed sleep). */
const eventually = (match: Partial<AuditRow>) =>
  vi.waitFor(
    async () => {
      const rows = await find(match);
      expect(rows.length, JSON.stringify(match)).toBeGreaterThan(0);
      return rows;
    },
    { timeout: 10_000, interval: 20 },
  );

beforeAll(async () => {
  server = await startTarget();
  env = server.databaseUrl ? { DATABASE_URL: server.databaseUrl } : { DATA_DIR: server.dataDir };
});
afterAll(async () => server?.stop());

let conversationId: string;
let fileId: string;
let fileUrl: string;

describe('writes: the row commits with the change', () => {
  it('create, update, delete of conversations and files: user, token, object, outcome, present once answered', async () => {
    const created = await alice.post('/v1/conversations', { json: { contact_id: CONTACT } });
    expect(created.status).toBe(201);
    conversationId = created.body.id;
    // No polling: the row is there as soon as the answer is.
    expect(await find({ action: 'create', object_id: conversationId })).toEqual([
      expect.objectContaining({ user_id: 'alice', token_id: 'static', object_type: 'conversation', outcome: '201', conversation_id: null }),
    ]);
    const row = (await find({ action: 'create', object_id: conversationId }))[0]!;
    expect(row.address).toMatch(/127\.0\.0\.1/);
    expect(Math.abs(row.at - Date.now())).toBeLessThan(60_000);

    expect((await alice.put(`/v1/conversations/${conversationId}`, { json: { is_muted: true } })).status).toBe(200);
    expect(await find({ action: 'update', object_id: conversationId })).toEqual([expect.objectContaining({ user_id: 'alice', token_id: 'static', outcome: '200' })]);

    const uploaded = await alice.upload({ conversation_id: conversationId }, { name: FILENAME, bytes: 'patient notes', type: 'text/plain' });
    expect(uploaded.status).toBe(201);
    fileId = uploaded.body.id;
    fileUrl = uploaded.body.file_url;
    expect(await find({ action: 'create', object_id: fileId })).toEqual([expect.objectContaining({ user_id: 'alice', object_type: 'file', outcome: '201' })]);

    const renamed = await alice.put(`/v1/files/${fileId}`, { json: { filename: RENAMED } });
    expect(renamed.status).toBe(200);
    fileUrl = renamed.body.file_url;
    expect(await find({ action: 'update', object_id: fileId })).toEqual([expect.objectContaining({ user_id: 'alice', object_type: 'file', outcome: '200' })]);
  });

  it('with an Idempotency-Key: the row goes with the key; a replay is recorded too (queued), with the same object', async () => {
    const key = { 'Idempotency-Key': `audit-${Date.now()}` };
    const first = await alice.post('/v1/conversations', { json: { group_id: 'group-audit-1' }, headers: key });
    expect(first.status).toBe(201);
    expect(await find({ action: 'create', object_id: first.body.id })).toHaveLength(1);
    const again = await alice.post('/v1/conversations', { json: { group_id: 'group-audit-1' }, headers: key });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await vi.waitFor(async () => expect(await find({ action: 'create', object_id: first.body.id })).toHaveLength(2), { timeout: 10_000, interval: 20 });
    // A refused create (409: one conversation per group) changes nothing: recorded with its outcome.
    const dup = await alice.post('/v1/conversations', { json: { group_id: 'group-audit-1' } });
    expect(dup.status).toBe(409);
    await eventually({ action: 'create', object_type: 'conversation', outcome: '409', object_id: null });
  });

  it('a stored token is recorded by its id', async () => {
    const { token, id } = await createToken(server.service.db, 'alice', 'audit phone');
    const r = await alice.put(`/v1/conversations/${conversationId}`, { json: { is_pinned: true }, token });
    expect(r.status).toBe(200);
    expect(await find({ action: 'update', object_id: conversationId, token_id: id })).toHaveLength(1);
  });
});

describe('resumable uploads (tus): creation, chunks and the file they become', () => {
  const tus = { 'tus-resumable': '1.0.0' };
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  it('POST records the upload with its creation; a PATCH its chunk; the finished file its own create — all present once answered', async () => {
    const name = 'tus-secret-name.bin';
    const created = await alice.post('/v1/uploads', {
      headers: { ...tus, 'upload-length': '10', 'upload-metadata': `filename ${b64(name)},conversation_id ${b64(conversationId)}` },
    });
    expect(created.status, created.text).toBe(201);
    const location = new URL(created.headers.get('location')!, server.baseUrl).pathname;
    const uploadId = location.split('/').pop()!;
    const patch = (offset: number, bytes: string) =>
      alice.call('PATCH', location, { headers: { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) }, body: bytes });
    expect((await patch(0, '01234')).status).toBe(204);
    const last = await patch(5, '56789');
    expect(last.status).toBe(204);
    const made = last.headers.get('upload-file-id')!;
    expect(made).toMatch(/^[A-Za-z0-9]{16}$/);
    // The file's create, with it (through a proxy the upstream sees the file's POST /v1/files).
    expect(await find({ action: 'create', object_type: 'file', object_id: made })).toEqual([expect.objectContaining({ user_id: 'alice', outcome: '201' })]);
    if (process.env.PARLEY_TEST_VIA_PROXY !== '1') {
      expect(await find({ action: 'create', object_type: 'upload', object_id: uploadId })).toEqual([expect.objectContaining({ user_id: 'alice', token_id: 'static', outcome: '201' })]);
      // The first PATCH's chunk row and its audit row committed together.
      expect((await find({ action: 'update', object_type: 'upload', object_id: uploadId })).length).toBeGreaterThanOrEqual(1);
    }
    expect(JSON.stringify(await all())).not.toContain(name);
  });
});

describe('reads: batched, flushed off the request path', () => {
  it('list, read, a list filtered by conversation, and a refused read of another user\'s conversation (404)', async () => {
    expect((await alice.get('/v1/conversations?limit=5')).status).toBe(200);
    expect((await alice.get(`/v1/conversations/${conversationId}`)).status).toBe(200);
    expect((await alice.get(`/v1/files?conversation_id=${conversationId}`)).status).toBe(200);
    expect((await alice.get(`/v1/files/${fileId}`)).status).toBe(200);
    expect((await bob.get(`/v1/conversations/${conversationId}`)).status).toBe(404);
    expect((await bob.put(`/v1/conversations/${conversationId}`, { json: { is_muted: false } })).status).toBe(404);

    await eventually({ action: 'list', object_type: 'conversation', user_id: 'alice', outcome: '200', object_id: null });
    await eventually({ action: 'read', object_type: 'conversation', object_id: conversationId, user_id: 'alice', token_id: 'static', outcome: '200' });
    await eventually({ action: 'list', object_type: 'file', conversation_id: conversationId, user_id: 'alice', outcome: '200' });
    await eventually({ action: 'read', object_type: 'file', object_id: fileId, user_id: 'alice', outcome: '200' });
    await eventually({ action: 'read', object_id: conversationId, user_id: 'bob', token_id: 'static', outcome: '404' });
    await eventually({ action: 'update', object_id: conversationId, user_id: 'bob', outcome: '404' });
  });

  it('a download through file_url: the owner, no token, the file, the outcome', async () => {
    const r = await fetch(fileUrl);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('patient notes');
    await eventually({ action: 'download', object_type: 'file', object_id: fileId, user_id: 'alice', token_id: null, outcome: '200' });
  });
});

describe('durable before the answer: a read\'s row is committed by the time its answer arrives', () => {
  it('many reads at once (one group commit, or a few): each row is there as soon as its answer is, without waiting', async () => {
    const conversation = (await alice.post('/v1/conversations', { json: { contact_id: 'durable-reads' } })).body.id as string;
    const answers = await Promise.all(Array.from({ length: 40 }, () => alice.get(`/v1/conversations/${conversation}`)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // No polling, no flush: read straight after the last answer.
    expect((await find({ action: 'read', object_id: conversation, user_id: 'alice' })).length).toBe(40);
  });
});

/** Instances answering the test's requests (tests/helpers/two-instances.ts alternates two). */
const INSTANCES = process.env.PARLEY_TEST_TWO_INSTANCES === '1' ? 2 : 1;

describe('refused tokens: recorded as failed sign-ins, at most one a minute per address, reason and token', () => {
  it('an unknown token (twice: one row, no user); a wiped device\'s token (its user and id)', async () => {
    const refused = (outcome: string) => find({ action: 'sign-in', outcome });
    const unknownBefore = (await refused('refused:unknown_token')).length;
    for (const token of ['no-such-token-1111111111', 'no-such-token-2222222222']) {
      expect((await client(() => server.baseUrl, token).get('/v1/conversations')).status).toBe(401);
    }
    const unknown = await refused('refused:unknown_token');
    // The once-a-minute throttle is each instance's own (memory): with several instances behind one
    // address, as many rows as instances answered (the two-instances project alternates them).
    expect(unknown.length).toBeGreaterThanOrEqual(unknownBefore + 1);
    expect(unknown.length).toBeLessThanOrEqual(unknownBefore + INSTANCES);
    expect(unknown.at(-1)).toMatchObject({ user_id: '(unknown)', token_id: null, object_type: 'token' });
    expect(JSON.stringify(unknown)).not.toContain('no-such-token');

    const device = await createToken(server.service.db, 'alice', 'wiped phone', 'device');
    await server.service.db.updateTable('tokens').set({ wiped_at: Math.floor(Date.now() / 1000) }).where('id', '=', device.id).execute();
    const phone = client(() => server.baseUrl, device.token);
    for (let i = 0; i < 3; i++) expect((await phone.get('/v1/conversations')).status).toBe(401);
    const wiped = await refused('refused:device_wiped');
    expect(wiped.length).toBeGreaterThanOrEqual(1);
    expect(wiped.length).toBeLessThanOrEqual(INSTANCES);
    for (const row of wiped) expect(row).toMatchObject({ user_id: 'alice', token_id: device.id, object_id: device.id });
    // No Authorization at all is not a presentation: nothing recorded.
    const before = (await all()).length;
    expect((await client(() => server.baseUrl).get('/v1/conversations')).status).toBe(401);
    expect((await all()).length).toBe(before);
  });
});

describe('deletes, contents, the CLI, retention', () => {
  it('deletes are recorded with the change; no file name or contact id anywhere in the trail', async () => {
    expect((await alice.del(`/v1/files/${fileId}`)).status).toBe(204);
    expect(await find({ action: 'delete', object_id: fileId })).toEqual([expect.objectContaining({ user_id: 'alice', outcome: '204' })]);
    expect((await alice.del(`/v1/conversations/${conversationId}`)).status).toBe(204);
    expect(await find({ action: 'delete', object_id: conversationId })).toEqual([expect.objectContaining({ user_id: 'alice', outcome: '204' })]);
    await server.service.audit.flush();
    const text = JSON.stringify(await all());
    for (const secret of [CONTACT, FILENAME, RENAMED, 'group-audit-1', 'patient notes']) expect(text).not.toContain(secret);
  });

  it('npm run audit: a table, --json lines, filters --user, --since, --object', async () => {
    await server.service.audit.flush();
    const table = await run('audit.ts', ['--user', 'alice', '--object', conversationId], env);
    expect(table.code, table.err).toBe(0);
    const lines = table.out.trim().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+USER\s+TOKEN\s+ACTION\s+OBJECT\s+ADDRESS\s+OUTCOME$/);
    expect(table.out).toMatch(new RegExp(`\\S+Z\\s+alice\\s+static\\s+create\\s+conversation ${conversationId}\\s+\\S+\\s+201`));
    expect(table.out).toMatch(new RegExp(`delete\\s+conversation ${conversationId}\\s+\\S+\\s+204`));
    expect(table.out).toMatch(new RegExp(`list\\s+files in conversation ${conversationId}`));
    expect(table.out).not.toContain(' bob ');

    const json = await run('audit.ts', ['--user', 'bob', '--since', new Date(Date.now() - 3600_000).toISOString().slice(0, 10), '--json'], env);
    expect(json.code, json.err).toBe(0);
    const rows = json.out.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(Object.keys(r)).toEqual(['time', 'user', 'token', 'action', 'object_type', 'object_id', 'conversation_id', 'address', 'outcome']);
      expect(r.user).toBe('bob');
    }
    expect(rows).toContainEqual(expect.objectContaining({ action: 'read', object_id: conversationId, outcome: '404' }));

    const future = await run('audit.ts', ['--since', '2999-01-01', '--json'], env);
    expect(future.code, future.err).toBe(0);
    expect(future.out).toBe('');
  });

  it('the CLI refuses bad arguments with exit 2, before opening anything', async () => {
    for (const args of [['--bogus'], ['stray'], ['--user'], ['--since', '2026-02-31'], ['--object', 'not an id'], ['--user', 'a', '--user', 'b'], ['--json', '--json']]) {
      expect(typeof parseArguments(args), args.join(' ')).toBe('string');
    }
    expect(parseSince('2026-11-01')).toBe(Date.UTC(2026, 10, 1));
    expect(parseSince('2026-11-01T09:00:00+01:00')).toBe(Date.UTC(2026, 10, 1, 8));
    expect(parseSince('2026-11-01T09:00:00')).toBeNull(); // a time without its zone is ambiguous
    expect(parseArguments(['--user', 'alice', '--since', '2026-11-01', '--object', 'abcdefghijklmnop', '--json'])).toEqual({
      query: { user: 'alice', since: Date.UTC(2026, 10, 1), object: 'abcdefghijklmnop' },
      json: true,
    });
    const unknown = await run('audit.ts', ['--user', 'alice', '--bogus'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/unknown option "--bogus"/);
    const stray = await run('audit.ts', ['alice'], env);
    expect(stray.code).toBe(2);
    expect(stray.err).toMatch(/unexpected argument "alice"/);
    expect(formatTable([])).toMatch(/^TIME/);
  });

  it('npm run token -- revoke / --wipe record revoke and wipe with the token\'s user and id, with the change', async () => {
    const a = await createToken(server.service.db, 'alice', 'to revoke');
    const b = await createToken(server.service.db, 'alice', 'to wipe');
    expect((await run('token.ts', ['revoke', a.id], env)).code).toBe(0);
    expect((await run('token.ts', ['revoke', b.token, '--wipe'], env)).code).toBe(0);
    expect(await find({ action: 'revoke', object_id: a.id })).toEqual([expect.objectContaining({ user_id: 'alice', token_id: a.id, object_type: 'token', outcome: 'ok' })]);
    expect(await find({ action: 'wipe', object_id: b.id })).toEqual([expect.objectContaining({ user_id: 'alice', token_id: b.id, outcome: 'ok' })]);
    expect(JSON.stringify(await find({ action: 'wipe' }))).not.toContain(b.token);
  });

  it('a phone let in by pairing is recorded (pairing, its new token); signing a device out records revoke, with erase wipe', async () => {
    const code = (await alice.post('/v1/me/pairings', { json: {} })).body;
    const redeemed = (await client(() => server.baseUrl).post('/v1/pairings/redeem', { json: { code: code.code, label: 'Chrome on Android' } })).body;
    expect((await alice.post(`/v1/me/pairings/${code.id}/approve`, { json: {} })).status).toBe(200);
    const collected = (await client(() => server.baseUrl).post(`/v1/pairings/${redeemed.pairing_id}/token`, { json: { secret: redeemed.secret } })).body;
    expect(await find({ action: 'pairing', object_id: collected.device_id })).toEqual([expect.objectContaining({ user_id: 'alice', token_id: collected.device_id, object_type: 'token', outcome: 'ok' })]);
    expect((await alice.del(`/v1/me/devices/${collected.device_id}?wipe=true`)).status).toBe(204);
    expect(await find({ action: 'wipe', object_id: collected.device_id })).toEqual([expect.objectContaining({ user_id: 'alice', object_type: 'device', outcome: '204' })]);
    const other = await createToken(server.service.db, 'alice', 'to sign out');
    expect((await alice.del(`/v1/me/devices/${other.id}`)).status).toBe(204);
    expect(await find({ action: 'revoke', object_id: other.id })).toEqual([expect.objectContaining({ user_id: 'alice', object_type: 'device', outcome: '204' })]);
  });

  it('append-only: an UPDATE is refused by the database; the retention prune (injected now) removes only rows past AUDIT_RETENTION_DAYS', async () => {
    const db = server.service.db;
    await expect(db.updateTable('audit').set({ user_id: 'mallory' }).execute()).rejects.toThrow(/append-only/);
    if (server.databaseUrl) await expect(db.deleteFrom('audit').execute()).rejects.toThrow(/append-only/);
    const now = Date.now();
    const day = 24 * 3600_000;
    await recordAudit(db, { user: 'carol', token: null, action: 'read', objectType: 'conversation', objectId: 'AAAAAAAAAAAAAAAA', outcome: 200, at: now - 366 * day });
    await recordAudit(db, { user: 'carol', token: null, action: 'read', objectType: 'conversation', objectId: 'BBBBBBBBBBBBBBBB', outcome: 200, at: now - 364 * day });
    // Others' rows (reads of earlier tests may still be arriving in their batches) are not touched.
    const others = (await all()).filter((r) => r.user_id !== 'carol').map((r) => r.seq);
    expect(await server.service.audit.prune(now)).toBe(1); // default 365 days
    expect((await find({ user_id: 'carol' })).map((r) => r.object_id)).toEqual(['BBBBBBBBBBBBBBBB']);
    const left = new Set((await all()).map((r) => r.seq));
    expect(others.filter((seq) => !left.has(seq))).toEqual([]);
    // A year and a day later, the other one goes too.
    expect(await server.service.audit.prune(now + 2 * day)).toBeGreaterThanOrEqual(1);
    expect(await find({ user_id: 'carol' })).toEqual([]);
  });
});

// @vitest-environment node
// Batched, pipelined push: independent operations are claimed and recorded in batches with a few
// requests in flight; dependent ones (same entity, temp-id chains) keep their order; a failure in
// the middle of a batch settles only that operation, and what was claimed but not sent is given
// back untouched. The pure rule (readyBatch) is tested on its own first.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OutboxOp } from '../../lib/sync/outbox/lifecycle';
import { blockedOpIds, readyBatch, type OpBody } from '../../lib/sync/outbox/operations';
import { BATCH_SIZE, CLAIM_SIZE, IN_FLIGHT } from '../../lib/sync/outbox/replay';
import { readSyncStatus } from '../../lib/sync/engine/status';
import { startTestServer, type TestServer } from '../helpers/server';
import { makeDevice, otherDevice, serverConversations, serverFiles } from './harness';

let seq = 0;
function op(entityId: string, body: OpBody, extra: Partial<OutboxOp> = {}): OutboxOp {
  seq++;
  return {
    seq,
    id: `op${seq}`,
    entity: body.kind.startsWith('file') ? 'file' : 'conversation',
    entityId,
    body,
    state: 'queued',
    attempts: 0,
    nextAttemptAt: 0,
    firstSentAt: null,
    outcomeUnknown: false,
    error: null,
    createdAt: 0,
    ...extra,
  };
}
const update = (id: string, extra?: Partial<OutboxOp>) => op(id, { kind: 'conversation.update', patch: { is_muted: true } }, extra);
const upload = (id: string, conversationId: string, tempMessageId: string | null, messageId: string | null = null) =>
  op(id, { kind: 'file.upload', conversationId, messageId, tempMessageId, filename: 'f', fileType: 't', size: 1, chunkCount: 1 });
const ready = (ops: OutboxOp[], now = 0, max = 50) => readyBatch(ops, blockedOpIds(ops), now, max);
const ids = (ops: OutboxOp[]) => ops.map((o) => o.id);

describe('readyBatch: what may go together', () => {
  it('takes independent operations, one per entity, up to the batch size', () => {
    const a1 = update('A');
    const b1 = update('B');
    const a2 = update('A');
    const c1 = update('C');
    expect(ids(ready([a1, b1, a2, c1]).ops)).toEqual(ids([a1, b1, c1]));
    expect(ids(ready([a1, b1, a2, c1], 0, 2).ops)).toEqual(ids([a1, b1]));
    // While A's first is in flight, its second waits.
    expect(ids(ready([{ ...a1, state: 'inflight' }, b1, a2, c1]).ops)).toEqual(ids([b1, c1]));
  });

  it('follows temp-id chains: what mentions a created id waits for its create, and for what waits before it', () => {
    const create = op('local_c', { kind: 'conversation.create', contact_id: 'x', group_id: null });
    const up = upload('local_f', 'local_c', 'local_m');
    const rename = op('local_f', { kind: 'file.rename', filename: 'g' });
    const pin = op('local_c', { kind: 'conversation.update', patch: { pinned_message_id: 'local_m' } });
    const attach = upload('local_g', 'REALCONVERSATION', null, 'local_m');
    const other = op('F', { kind: 'file.rename', filename: 'h' });
    expect(ids(ready([create, up, rename, pin, attach, other]).ops)).toEqual(ids([create, other]));
    // The create answered and remapped: the upload may go, not yet what needs the upload's creations.
    const remapped = upload('F_REAL', 'C_REAL', 'local_m');
    remapped.seq = up.seq;
    remapped.id = up.id;
    expect(ids(ready([remapped, rename, pin, attach, other]).ops)).toEqual(ids([remapped, other]));
  });

  it('an operation on a conversation waits for earlier ones naming it (an upload into it, a delete of it)', () => {
    const up = upload('local_f', 'C', 'local_m');
    const del = op('C', { kind: 'conversation.delete' });
    expect(ids(ready([up, del]).ops)).toEqual(ids([up]));
  });

  it('a conversation create waits for the pending delete it is ordered after (the same contact), and only for that', () => {
    const del = op('OLD', { kind: 'conversation.delete' });
    const create = op('local_n', { kind: 'conversation.create', contact_id: 'x', group_id: null }, { after: ['OLD'] });
    const other = op('local_o', { kind: 'conversation.create', contact_id: 'y', group_id: null });
    expect(ids(ready([del, create, other]).ops)).toEqual(ids([del, other]));
    expect(ids(ready([create]).ops)).toEqual(ids([create]));
    // Behind a delete that failed: blocked, not sent.
    const failedDelete = op('OLD', { kind: 'conversation.delete' }, { state: 'failed' });
    const behind = op('local_p', { kind: 'conversation.create', contact_id: 'x', group_id: null }, { after: ['OLD'] });
    expect(ids(ready([failedDelete, behind]).ops)).toEqual([]);
    expect(blockedOpIds([failedDelete, behind]).has(behind.id)).toBe(true);
  });

  it('behind an unanswered conversation create: its contact\'s creates and every conversation change wait; files and other contacts go', () => {
    // The server may answer a create with a conversation already known (409 conversation_exists,
    // adopted): a change to any conversation may then be a change to the one being created.
    const createX = op('local_x1', { kind: 'conversation.create', contact_id: 'x', group_id: null });
    const createX2 = op('local_x2', { kind: 'conversation.create', contact_id: 'x', group_id: null });
    const createY = op('local_y', { kind: 'conversation.create', contact_id: 'y', group_id: null });
    const createG = op('local_g', { kind: 'conversation.create', group_id: 'x' });
    const pinKnown = update('KNOWN');
    const deleteKnown = op('KNOWN2', { kind: 'conversation.delete' });
    const rename = op('F', { kind: 'file.rename', filename: 'g' });
    const all = [createX, createX2, createY, createG, pinKnown, deleteKnown, rename];
    expect(ids(ready(all).ops)).toEqual(ids([createX, createY, createG, rename]));
    // In flight, it holds up the same.
    expect(ids(ready([{ ...createX, state: 'inflight' }, createX2, pinKnown, rename]).ops)).toEqual(ids([rename]));
    // Answered (gone from the outbox): what waited goes, in order per entity.
    expect(ids(ready([createX2, pinKnown, deleteKnown]).ops)).toEqual(ids([createX2]));
    expect(ids(ready([pinKnown, deleteKnown]).ops)).toEqual(ids([pinKnown, deleteKnown]));
    // A failed create holds up nothing here (blockedOpIds says what it blocks).
    expect(ids(ready([{ ...createX, state: 'failed' }, createX2, pinKnown]).ops)).toEqual(ids([createX2]));
    // Changes made before the create are not held by it.
    expect(ids(ready([pinKnown, createX]).ops)).toEqual(ids([pinKnown, createX]));
  });

  it('failed and blocked operations hold up only what blockedOpIds says', () => {
    const failed = update('A', { state: 'failed' });
    const behind = update('A');
    const up = upload('local_f', 'A', 'local_m');
    expect(ids(ready([failed, behind, up]).ops)).toEqual(ids([up]));
  });

  it('stops at the first operation whose backoff has not run out', () => {
    const a = update('A');
    const b = update('B', { nextAttemptAt: 5_000 });
    const c = update('C');
    expect(ready([a, b, c], 1_000)).toEqual({ ops: [a], waitUntil: 5_000 });
    expect(ready([b, c], 1_000)).toEqual({ ops: [], waitUntil: 5_000 });
    expect(ids(ready([a, b, c], 5_000).ops)).toEqual(ids([a, b, c]));
  });
});

describe('pipelined push against a real server', () => {
  let server: TestServer;
  const existing: string[] = [];
  beforeAll(async () => {
    server = await startTestServer();
    const other = otherDevice(server.baseUrl, server.tokens.bob);
    for (let i = 0; i < 12; i++) existing.push((await other.createConversation({ contact_id: `batch-${i}` })).id);
  });
  afterAll(async () => server.stop());

  /** A fetch that counts requests in flight and logs the order requests are sent in. */
  function countingFetch() {
    const stats = { inFlight: 0, maxInFlight: 0, sent: [] as string[] };
    const wrapped = async (input: string, init?: RequestInit) => {
      const write = (init?.method ?? 'GET') !== 'GET'; // the pull's reads have their own concurrency
      if (write) stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      stats.sent.push(`${init?.method ?? 'GET'} ${new URL(input).pathname}`);
      try {
        const response = await fetch(input, init);
        const body = await response.arrayBuffer();
        return new Response(body, { status: response.status, headers: response.headers });
      } finally {
        if (write) stats.inFlight--;
      }
    };
    return { stats, fetch: wrapped };
  }

  it('sends many independent changes a few at a time, with a transaction per batch rather than per operation', async () => {
    const net = countingFetch();
    let transactions = 0;
    const d = makeDevice(server.baseUrl, server.tokens.bob, { engine: { fetch: net.fetch, replayProbe: { onTransaction: () => transactions++ } } });
    await d.settle();
    const N = 120;
    for (let i = 0; i < N; i++) {
      const created = await d.client.createConversation({ contact_id: `many-${i}` });
      expect(created.startsWith('local_')).toBe(true);
    }
    net.stats.sent.length = 0;
    net.stats.maxInFlight = 0;
    const before = transactions;
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    expect(net.stats.sent.filter((r) => r === 'POST /v1/conversations')).toHaveLength(N);
    expect(net.stats.maxInFlight).toBe(IN_FLIGHT);
    // Claims and recorded answers: a few per batch of BATCH_SIZE, never one per operation.
    // The probe is told: the claims (CLAIM_SIZE each) and at least one recording. (Answers that
    // came while a batch was being recorded go together in the next: a recording may hold more.)
    expect(transactions - before).toBeGreaterThanOrEqual(Math.ceil(N / CLAIM_SIZE) + 1);
    expect(transactions - before).toBeLessThanOrEqual(4 * Math.ceil(N / BATCH_SIZE) + 4);
    const onServer = (await serverConversations(server.baseUrl, server.tokens.bob)).filter((c) => c.contact_id?.startsWith('many-'));
    expect(onServer).toHaveLength(N);
    d.close();
  });

  it('keeps sending while a batch of answers is being recorded: the free slots do not wait for its transaction', async () => {
    let recording = false;
    let recordings = 0;
    let startedWhileRecording = 0;
    const net = countingFetch();
    const probe = {
      onRecording: (active: boolean) => ((recording = active), active && recordings++),
      onStart: () => recording && startedWhileRecording++,
    };
    const d = makeDevice(server.baseUrl, server.tokens.bob, { engine: { fetch: net.fetch, replayProbe: probe } });
    await d.settle();
    const N = 4 * BATCH_SIZE;
    for (let i = 0; i < N; i++) await d.client.createConversation({ contact_id: `overlap-${i}` });
    recordings = 0;
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    expect(net.stats.sent.filter((r) => r === 'POST /v1/conversations')).toHaveLength(N);
    expect(recordings).toBeGreaterThanOrEqual(2);
    // Awaited in turn (as before), no request could start while answers were being written.
    expect(startedWhileRecording).toBeGreaterThan(0);
    d.close();
  });

  it('records a batch of uploads\' answers with one read of the outbox, however many temp ids they remap', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    await d.settle();
    const made = [];
    for (let i = 0; i < 40; i++) made.push(await d.client.createConversation({ contact_id: `remap-${i}` }));
    await d.settle();
    const targets = await Promise.all(made.map((id) => d.client.resolveId(id)));
    expect(new Set(targets).size).toBe(40);
    for (const [i, id] of targets.entries()) await d.client.uploadFile({ conversationId: id }, { name: `remap-${i}.txt`, bytes: new TextEncoder().encode(`r${i}`) });
    let rowsRead = 0;
    d.db.outbox.hook('reading', (row) => ((rowsRead += 1), row));
    // The server's copies and the outbox's removals are written in bulk, not one request per answer.
    const onePut = vi.spyOn(d.db.serverFiles, 'put');
    const oneDelete = vi.spyOn(d.db.outbox, 'delete');
    await d.settle();
    expect(onePut).not.toHaveBeenCalled();
    expect(oneDelete).not.toHaveBeenCalled();
    vi.restoreAllMocks();
    expect(await d.db.outbox.count()).toBe(0);
    const files = (await Promise.all(targets.map((id) => serverFiles(server.baseUrl, server.tokens.bob, id)))).flat();
    expect(files.filter((f) => f.filename.startsWith('remap-'))).toHaveLength(40);
    // Each answer remaps two temp ids (the file's, its message's). Read once per remap, the
    // outbox's rows were read ~40 × 2 × (the rows still queued) times: 1,600 and more.
    expect(rowsRead).toBeLessThan(40 * 12);
    d.close();
  });

  it('keeps order along a temp-id chain and per entity while independent work runs beside it', async () => {
    const net = countingFetch();
    const d = makeDevice(server.baseUrl, server.tokens.bob, { engine: { fetch: net.fetch } });
    await d.settle();
    const conv = await d.client.createConversation({ contact_id: 'chain' });
    const file = await d.client.uploadFile({ conversationId: conv }, { name: 'a.txt', bytes: new TextEncoder().encode('a') });
    const message = (await d.db.files.get(file))!.message_id;
    await d.client.uploadFile({ conversationId: conv, messageId: message }, { name: 'b.txt', bytes: new TextEncoder().encode('bb') });
    for (const id of existing) await d.client.updateConversation(id, { is_pinned: true });
    await d.engine.syncOnce(); // sends the create: the chain's rest must wait for its answer
    await d.client.renameFile(file, 'renamed.txt');
    for (const id of existing) await d.client.updateConversation(id, { is_muted: true });
    net.stats.sent.length = 0;
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    const convId = await d.client.resolveId(conv);
    const files = await serverFiles(server.baseUrl, server.tokens.bob, convId);
    expect(files.map((f) => f.filename).sort()).toEqual(['b.txt', 'renamed.txt']);
    expect(new Set(files.map((f) => f.message_id)).size).toBe(1); // attached to the first upload's message
    const onServer = await serverConversations(server.baseUrl, server.tokens.bob);
    for (const id of existing) expect(onServer.find((c) => c.id === id)).toMatchObject({ is_pinned: true, is_muted: true });
    d.close();
  });

  /**
   * A create of contact X waits out a backoff; meanwhile another device starts a conversation with
   * X, which this device pulls and shows beside its own. The create will be answered 409
   * conversation_exists and adopt it: two local ids, one conversation.
   */
  async function twoIdsForOneConversation(contact: string) {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    await d.settle();
    const mine = await d.client.createConversation({ contact_id: contact });
    d.net.inject({ status: 500, body: { type: 'api_error', code: 'internal', message: 'injected' } }, 'POST');
    await d.engine.syncOnce();
    const theirs = (await otherDevice(server.baseUrl, server.tokens.bob).createConversation({ contact_id: contact })).id;
    await d.engine.syncOnce(); // the create still backs off; the pull brings theirs
    expect(await d.db.conversations.get(theirs)).toBeDefined();
    expect((await d.db.conversations.where('contact_id').equals(contact).toArray()).map((c) => c.id).sort()).toEqual([mine, theirs].sort());
    return { d, mine, theirs };
  }

  async function settledOnServer(d: ReturnType<typeof makeDevice>, contact: string) {
    d.clock.advance(120_000);
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    const onServer = (await serverConversations(server.baseUrl, server.tokens.bob)).filter((c) => c.contact_id === contact);
    expect(onServer).toHaveLength(1);
    return onServer[0]!;
  }

  it('a change to a known conversation waits for an earlier create that may turn out to be the same one', async () => {
    // The property test's counterexample (ci52), in its simplest form.
    const { d, mine, theirs } = await twoIdsForOneConversation('twice');
    await d.client.updateConversation(mine, { is_pinned: false, archived_at: 1_700_000_001 });
    await d.client.updateConversation(theirs, { is_pinned: true });
    const conversation = await settledOnServer(d, 'twice');
    expect(await d.client.resolveId(mine)).toBe(theirs);
    expect(conversation).toMatchObject({ id: theirs, is_pinned: true, archived_at: 1_700_000_001 });
    d.close();
  });

  it('a change is not merged into an earlier one across a change to a conversation still to be created', async () => {
    const { d, mine, theirs } = await twoIdsForOneConversation('thrice');
    await d.client.updateConversation(theirs, { is_muted: true });
    await d.client.updateConversation(mine, { is_pinned: false });
    // Merged into the first change of theirs, this would overtake the change of mine.
    await d.client.updateConversation(theirs, { is_pinned: true });
    expect(await d.db.outbox.count()).toBe(4);
    const conversation = await settledOnServer(d, 'thrice');
    expect(conversation).toMatchObject({ id: theirs, is_muted: true, is_pinned: true });
    d.close();
  });

  it('a refusal in the middle of a batch fails that operation only; what follows it on the entity waits', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    await d.settle();
    for (const id of existing) await d.client.updateConversation(id, { archived_at: 1_700_000_100 });
    await d.settle();
    const victim = existing[5]!;
    for (const id of existing.slice(0, IN_FLIGHT - 1)) await d.client.updateConversation(id, { archived_at: null });
    await d.client.updateConversation(victim, { is_muted: true });
    // Offline: the first round is tried (the victim's change with it), so the next change on it
    // is an operation of its own rather than merged into this one.
    d.net.offline = true;
    await d.engine.syncOnce();
    d.net.offline = false;
    expect((await d.db.outbox.toArray()).find((o) => o.entityId === victim)?.firstSentAt).not.toBeNull();
    await d.client.updateConversation(victim, { archived_at: null });
    for (const id of existing.slice(IN_FLIGHT - 1)) if (id !== victim) await d.client.updateConversation(id, { archived_at: null });
    d.net.inject({ status: 400, body: { type: 'invalid_request', code: 'parameter_invalid', message: 'refused here' } }, 'PUT', new RegExp(victim));
    d.clock.advance(10 * 60_000);
    await d.engine.syncOnce();
    const status = await readSyncStatus(d.db);
    expect(status.failed.map((f) => [f.entityId, f.blocked, f.error?.message ?? null])).toEqual([
      [victim, false, 'refused here'],
      [victim, true, null],
    ]);
    expect(status.pendingCount).toBe(0);
    const onServer = await serverConversations(server.baseUrl, server.tokens.bob);
    for (const id of existing) expect(onServer.find((c) => c.id === id)?.archived_at).toBe(id === victim ? 1_700_000_100 : null);
    d.close();
  });

  it('a retryable failure stops the replay; what was claimed but not sent is given back as never sent', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    await d.settle();
    for (const id of existing) await d.client.updateConversation(id, { is_pinned: false });
    // Every request of the first round fails: whichever is answered first stops the replay.
    for (let i = 0; i < IN_FLIGHT; i++) d.net.inject({ status: 503, body: { type: 'api_error', code: 'internal', message: 'busy' } }, 'PUT');
    const report = await d.engine.syncOnce();
    expect(report.push).toMatchObject({ kind: 'waiting', reason: 'server' });
    expect(d.net.seen.filter((r) => r.method === 'PUT')).toHaveLength(IN_FLIGHT);
    const ops = await d.db.outbox.toArray();
    expect(ops).toHaveLength(existing.length);
    // Those sent wait out their backoff, outcome unknown (a 5xx may have acted); those claimed
    // but never sent are queued as before their claim, so the client may still merge into them.
    const sent = ops.filter((o) => o.attempts === 1);
    expect(sent).toHaveLength(IN_FLIGHT);
    for (const o of sent) expect(o).toMatchObject({ state: 'queued', outcomeUnknown: true, error: { status: 503 } });
    for (const o of ops.filter((o) => o.attempts === 0)) expect(o).toMatchObject({ state: 'queued', firstSentAt: null, outcomeUnknown: false });
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    d.close();
  });

  it('when recording answers fails (IndexedDB trouble), the replay ends only after its requests have', async () => {
    // Otherwise the next replay would recover an operation whose request is still on the wire.
    let inFlight = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let puts = 0;
    const d = makeDevice(server.baseUrl, server.tokens.bob, {
      engine: {
        fetch: async (input, init) => {
          const put = init?.method === 'PUT';
          if (!put) return fetch(input, init);
          inFlight++;
          try {
            if (++puts > 1) await gate; // the first is answered at once, the others are slow
            const response = await fetch(input, init);
            return new Response(await response.arrayBuffer(), { status: response.status, headers: response.headers });
          } finally {
            inFlight--;
          }
        },
      },
    });
    await d.settle();
    const targets = existing.slice(0, IN_FLIGHT);
    for (const id of targets) await d.client.updateConversation(id, { is_muted: false, archived_at: 1_700_000_200 });
    vi.spyOn(d.db.outbox, 'bulkDelete').mockImplementationOnce(() => {
      setTimeout(open, 100); // the slow answers arrive a little later
      return Promise.reject(new Error('IndexedDB trouble')) as never;
    });
    const failure = await d.engine.syncOnce().then(
      () => null,
      (error: Error) => ({ message: error.message, inFlight }),
    );
    expect(failure).toEqual({ message: 'IndexedDB trouble', inFlight: 0 });
    vi.restoreAllMocks();
    // What was answered but not recorded is recovered (outcome unknown) and sent again with its key.
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    const onServer = await serverConversations(server.baseUrl, server.tokens.bob);
    for (const id of targets) expect(onServer.find((c) => c.id === id)?.archived_at).toBe(1_700_000_200);
    d.close();
  });

  it('an exception while settling one request (IndexedDB trouble) ends the replay with that error, after the others', async () => {
    const d = makeDevice(server.baseUrl, server.tokens.bob);
    await d.settle();
    const targets = existing.slice(0, 3);
    for (const id of targets) await d.client.updateConversation(id, { is_muted: true, archived_at: 1_700_000_300 });
    d.net.inject({ status: 503, body: { type: 'api_error', code: 'internal', message: 'busy' } }, 'PUT');
    // The first outbox.update is the one recording that 503 (claims and answers write otherwise).
    vi.spyOn(d.db.outbox, 'update').mockImplementationOnce(() => Promise.reject(new Error('IndexedDB trouble')) as never);
    await expect(d.engine.syncOnce()).rejects.toThrow('IndexedDB trouble');
    vi.restoreAllMocks();
    // The others were answered and recorded; the troubled one is still claimed, recovered next time.
    const left = await d.db.outbox.toArray();
    expect(left).toMatchObject([{ state: 'inflight' }]);
    await d.settle();
    expect(await d.db.outbox.count()).toBe(0);
    const onServer = await serverConversations(server.baseUrl, server.tokens.bob);
    for (const id of targets) expect(onServer.find((c) => c.id === id)).toMatchObject({ is_muted: true, archived_at: 1_700_000_300 });
    d.close();
  });
});

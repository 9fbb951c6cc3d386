// The change feed under concurrent writers: a reader that follows the feed WHILE writes commit
// must end with exactly the server's state — no event skipped because a later one committed
// first. On PostgreSQL this runs across two instances on one database, whose live streams are
// fanned out by LISTEN/NOTIFY.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationPage, EventPage, type ChangeEvent, type Conversation } from '../../lib/schemas';
import { client } from '../helpers/api';
import { openSse } from '../helpers/sse';
import { startTarget } from '../helpers/target';
import { startTestServer, type TestServer } from '../helpers/server';
import { createToken, revokeToken } from '../../lib/api/domain/tokens';

const postgres = process.env.PARLEY_TEST_POSTGRES === '1';

let a: TestServer;
/** A second instance on the same database (PostgreSQL), else the same server. */
let b: TestServer;
let database: { url: string; drop(): Promise<void> } | null = null;

beforeAll(async () => {
  if (postgres) {
    const { createTestDatabase } = await import('../helpers/postgres');
    database = await createTestDatabase();
    const env = { DATABASE_URL: database.url, STREAM_TOKEN_RECHECK_MS: '50' };
    a = await startTestServer({ env });
    b = await startTestServer({ env });
  } else {
    a = b = await startTarget();
  }
});
afterAll(async () => {
  if (b !== a) await b.stop();
  await a.stop();
  await database?.drop();
});

async function allConversations(c: ReturnType<typeof client>): Promise<Conversation[]> {
  const out: Conversation[] = [];
  for (let after = ''; ; ) {
    const page = ConversationPage.parse((await c.get(`/v1/conversations?limit=100${after}`)).body);
    out.push(...page.data);
    if (!page.has_more) return out;
    after = `&starting_after=${page.data.at(-1)!.id}`;
  }
}

describe('the feed under concurrent writers', () => {
  it('a reader following the feed during 200 concurrent writes ends with the server’s state', async () => {
    const onA = client(() => a.baseUrl, a.tokens.alice);
    const onB = client(() => b.baseUrl, b.tokens.alice);
    const start = EventPage.parse((await onA.get('/v1/events?limit=0')).body).next;
    const mirror = new Map<string, Conversation>();
    const apply = (events: ChangeEvent[]) => {
      for (const e of events) {
        if (e.type === 'conversation.deleted') mirror.delete(e.object.id);
        else if (e.type === 'conversation.created' || e.type === 'conversation.updated') mirror.set(e.object.id, e.object);
      }
    };
    let writing = true;
    let cursor = start;
    const reader = (async () => {
      // Keep reading while the writers run, then once more after the last commit.
      for (let last = false; ; ) {
        const page = EventPage.parse((await onA.get(`/v1/events?after=${cursor}&limit=7`)).body);
        apply(page.data);
        cursor = page.next;
        if (page.has_more) continue;
        if (last) return;
        if (!writing) last = true;
      }
    })();
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? onA : onB).post('/v1/conversations', { json: { contact_id: `race-${i}` } })),
    );
    const ids = created.map((r) => r.body.id as string);
    await Promise.all(
      ids.flatMap((id, i) => [
        (i % 2 ? onB : onA).put(`/v1/conversations/${id}`, { json: { is_pinned: i % 3 === 0 } }),
        (i % 2 ? onA : onB).put(`/v1/conversations/${id}`, { json: { is_muted: i % 5 === 0 } }),
        (i % 2 ? onB : onA).put(`/v1/conversations/${id}`, { json: { archived_at: i } }),
        ...(i % 4 === 0 ? [(i % 2 ? onA : onB).del(`/v1/conversations/${id}`)] : []),
      ]),
    );
    writing = false;
    await reader;
    const server = await allConversations(onA);
    const expected = new Map(server.filter((c) => c.contact_id?.startsWith('race-')).map((c) => [c.id, c]));
    const seen = new Map([...mirror].filter(([, c]) => c.contact_id?.startsWith('race-')));
    expect(seen).toEqual(expected);
  });

  it.runIf(postgres)('an event numbered before a later commit is never skipped (PostgreSQL commit order)', async () => {
    const pg = (await import('pg')).default;
    const alice = client(() => a.baseUrl, a.tokens.alice);
    const x = (await alice.post('/v1/conversations', { json: { contact_id: 'held' } })).body;
    const y = (await alice.post('/v1/conversations', { json: { contact_id: 'quick' } })).body;
    const start = EventPage.parse((await alice.get('/v1/events?limit=0')).body).next;
    // A write that has started (its row changed, its event written if events were numbered at
    // write time) but not committed yet...
    const held = new pg.Client({ connectionString: database!.url });
    await held.connect();
    try {
      await held.query('begin');
      await held.query('update conversations set is_muted = 1 where id = $1', [x.id]);
      // ...while another write commits, and a reader moves its cursor past it.
      await alice.put(`/v1/conversations/${y.id}`, { json: { is_pinned: true } });
      const first = EventPage.parse((await alice.get(`/v1/events?after=${start}&limit=1000`)).body);
      expect(first.data.map((e) => e.object.id)).toEqual([y.id]);
      await held.query('commit');
      const second = EventPage.parse((await alice.get(`/v1/events?after=${first.next}&limit=1000`)).body);
      expect(second.data.map((e) => [e.type, e.object.id])).toEqual([['conversation.updated', x.id]]);
    } finally {
      await held.end();
    }
  });

  it.runIf(postgres)('a live stream on one instance receives a change made through the other', async () => {
    const stream = await openSse(`${a.baseUrl}/v1/events/stream`, { authorization: `Bearer ${a.tokens.alice}` });
    try {
      const made = (await client(() => b.baseUrl, b.tokens.alice).post('/v1/conversations', { json: { contact_id: 'across' } })).body;
      const message = await stream.next((m) => m.data.includes(made.id));
      expect(JSON.parse(message.data)).toMatchObject({ type: 'conversation.created', object: { id: made.id } });
    } finally {
      stream.close();
    }
  });

  it.runIf(postgres)('a stream on one instance ends when its token is revoked, while the other instance had it cached', async () => {
    const { token } = await createToken(a.service.db, 'revoked-across');
    const stream = await openSse(`${a.baseUrl}/v1/events/stream`, { authorization: `Bearer ${token}` });
    try {
      expect(stream.status).toBe(200);
      // Instance b knows the token (its cache holds it) when the CLI revokes it in the database.
      expect((await client(() => b.baseUrl, token).get('/v1/me')).status).toBe(200);
      expect(await revokeToken(b.service.db, token)).toBe(1);
      const message = await stream.next((m) => m.event === 'error');
      expect(JSON.parse(message.data)).toMatchObject({ type: 'invalid_request', code: 'unauthenticated' });
      await stream.ended();
    } finally {
      stream.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationPage } from '../../lib/schemas';
import { client } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';

let s: TestServer;
let alice: ReturnType<typeof client>;
const created: string[] = []; // in creation order

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  for (let i = 0; i < 250; i++) {
    const r = await alice.post('/v1/conversations', { form: { contact_id: `page-${i}` } });
    created.push(r.body.id);
  }
  // Every item is created within a few seconds: order must come from the sequence, not created_at.
});
afterAll(() => s.stop());

const newestFirst = () => [...created].reverse();

describe('cursor pagination over 250 conversations', () => {
  it('default limit is 10, newest first', async () => {
    const r = await alice.get('/v1/conversations');
    ConversationPage.parse(r.body);
    expect(r.body.data.map((c: any) => c.id)).toEqual(newestFirst().slice(0, 10));
    expect(r.body.has_more).toBe(true);
  });

  it('starting_after walks forward and returns each item exactly once, in order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    for (;;) {
      const r: any = await alice.get(`/v1/conversations?limit=100${cursor ? `&starting_after=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((c: any) => c.id));
      pages++;
      if (!r.body.has_more) break;
      cursor = r.body.data[r.body.data.length - 1].id;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst());
  });

  it('ending_before walks backward from the oldest and returns each item exactly once', async () => {
    const oldest = created[0]!;
    const seen: string[][] = [];
    let cursor = oldest;
    for (;;) {
      const r: any = await alice.get(`/v1/conversations?limit=7&ending_before=${cursor}`);
      expect(r.status).toBe(200);
      const ids = r.body.data.map((c: any) => c.id);
      seen.unshift(ids);
      if (!r.body.has_more) break;
      cursor = ids[0];
    }
    // data within each page is in list order (newest first); pages stitched together = the list minus the cursor
    expect(seen.flat()).toEqual(newestFirst().slice(0, 249));
  });

  it('has_more is false exactly at the ends', async () => {
    const last = await alice.get(`/v1/conversations?limit=10&starting_after=${created[10]}`);
    expect(last.body.data.map((c: any) => c.id)).toEqual([...created.slice(0, 10)].reverse());
    expect(last.body.has_more).toBe(false);
    const first = await alice.get(`/v1/conversations?limit=5&ending_before=${created[244]}`);
    expect(first.body.data.map((c: any) => c.id)).toEqual(newestFirst().slice(0, 5));
    expect(first.body.has_more).toBe(false);
    const nothing = await alice.get(`/v1/conversations?starting_after=${created[0]}`);
    expect(nothing.body).toEqual({ has_more: false, data: [] });
  });

  it('limit 1-100; 0, 101, abc: 400 param limit', async () => {
    expect((await alice.get('/v1/conversations?limit=1')).body.data.length).toBe(1);
    expect((await alice.get('/v1/conversations?limit=100')).body.data.length).toBe(100);
    for (const bad of ['0', '101', 'abc', '-1', '1.5', '']) {
      const r = await alice.get(`/v1/conversations?limit=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
    }
  });

  it('both cursors: 400; an id not in the list: 400', async () => {
    const both = await alice.get(`/v1/conversations?starting_after=${created[5]}&ending_before=${created[9]}`);
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('parameter_invalid');
    for (const id of ['AAAAAAAAAAAAAAAA', 'nope']) {
      const r = await alice.get(`/v1/conversations?starting_after=${id}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'parameter_invalid', param: 'starting_after' });
      const b = await alice.get(`/v1/conversations?ending_before=${id}`);
      expect(b.body).toMatchObject({ code: 'parameter_invalid', param: 'ending_before' });
    }
    // in the user's data but filtered out of this list → not in the list
    await alice.put(`/v1/conversations/${created[3]}`, { json: { is_muted: true } });
    const filtered = await alice.get(`/v1/conversations?muted=false&starting_after=${created[3]}`);
    expect(filtered.status).toBe(400);
    // another user's id is not in this user's list
    const bob = client(() => s.baseUrl, s.tokens.bob);
    expect((await bob.get(`/v1/conversations?starting_after=${created[3]}`)).status).toBe(400);
  });

  it('pages with a filter', async () => {
    for (const i of [10, 20, 30]) await alice.put(`/v1/conversations/${created[i]}`, { json: { is_pinned: true } });
    const p1 = await alice.get('/v1/conversations?pinned=true&limit=2');
    expect(p1.body.data.map((c: any) => c.id)).toEqual([created[30], created[20]]);
    expect(p1.body.has_more).toBe(true);
    const p2 = await alice.get(`/v1/conversations?pinned=true&limit=2&starting_after=${created[20]}`);
    expect(p2.body.data.map((c: any) => c.id)).toEqual([created[10]]);
    expect(p2.body.has_more).toBe(false);
  });
});

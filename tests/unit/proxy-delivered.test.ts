// The proxy's look for what a lost delivery made (lib/proxy/delivered.ts), over a listing served
// from a table: newest first, up to the snapshot's file, by name, size and message, unclaimed,
// the oldest match — or none.
import { describe, expect, it } from 'vitest';
import { findDelivered, ListingRefused, sameUpload, takeSnapshot, type DeliveryTarget, type Lister } from '../../lib/proxy/delivered';

interface Row {
  id: string;
  filename: string;
  file_size: number;
  message_id: string;
  created_at: number;
}

const file = (id: string, filename = 'scan.pdf', size = 100, created = 1000, message = 'M000000000000000'): Row => ({
  id: id.padEnd(16, '0'),
  filename,
  file_size: size,
  message_id: message,
  created_at: created,
});

/** A listing of `rows` (newest first) in pages of `pageSize`, as GET /v1/files answers. */
function lister(rows: Row[], pageSize = 2, date: string | null = 'Thu, 01 Jan 1970 00:16:40 GMT'): Lister & { paths: string[] } {
  const paths: string[] = [];
  const list = async (path: string) => {
    paths.push(path);
    const query = new URL(path, 'http://x').searchParams;
    const limit = Math.min(Number(query.get('limit')), pageSize);
    const after = query.get('starting_after');
    const start = after ? rows.findIndex((r) => r.id === after) + 1 : 0;
    const data = rows.slice(start, start + limit).map((r) => ({ ...r, file_url: `http://x/files/${r.filename}?id=${r.id}&sig=s`, file_type: 'application/pdf' }));
    return { status: 200, text: JSON.stringify({ data, has_more: start + limit < rows.length }), date };
  };
  return Object.assign(list, { paths });
}

const target: DeliveryTarget = { conversationId: 'C000000000000000', messageId: null, filename: 'scan.pdf', size: 100 };
const never = async () => false;

describe('findDelivered', () => {
  const cases: Array<{ name: string; rows: Row[]; snapshot: { newestFileId: string | null; serverTime: number | null }; target?: DeliveryTarget; claimed?: string[]; expected: string | null }> = [
    { name: 'nothing made since the snapshot', rows: [file('old')], snapshot: { newestFileId: file('old').id, serverTime: 1000 }, expected: null },
    { name: 'one made since', rows: [file('new'), file('old')], snapshot: { newestFileId: file('old').id, serverTime: 1000 }, expected: file('new').id },
    { name: 'two made since (two lost answers): the oldest', rows: [file('b'), file('a'), file('old')], snapshot: { newestFileId: file('old').id, serverTime: 1000 }, expected: file('a').id },
    { name: 'an older one of the same name is not ours', rows: [file('other', 'x.pdf'), file('old')], snapshot: { newestFileId: file('old').id, serverTime: 1000 }, expected: null },
    { name: 'another size', rows: [file('new', 'scan.pdf', 99), file('old')], snapshot: { newestFileId: file('old').id, serverTime: 1000 }, expected: null },
    { name: 'claimed by another upload', rows: [file('b'), file('a'), file('old')], snapshot: { newestFileId: file('old').id, serverTime: 1000 }, claimed: [file('a').id], expected: file('b').id },
    { name: 'all claimed', rows: [file('a'), file('old')], snapshot: { newestFileId: file('old').id, serverTime: 1000 }, claimed: [file('a').id], expected: null },
    { name: 'no files before the first POST', rows: [file('new')], snapshot: { newestFileId: null, serverTime: 1000 }, expected: file('new').id },
    {
      name: "the snapshot's file deleted since: older files stop the scan by time",
      rows: [file('new', 'scan.pdf', 100, 1001), file('before', 'scan.pdf', 100, 900)],
      snapshot: { newestFileId: file('gone').id, serverTime: 1000 },
      expected: file('new').id,
    },
    {
      name: 'into a message: only a file of that message',
      rows: [file('elsewhere', 'scan.pdf', 100, 1000, 'X000000000000000'), file('old')],
      snapshot: { newestFileId: file('old').id, serverTime: 1000 },
      target: { ...target, conversationId: null, messageId: 'M000000000000000' },
      expected: null,
    },
    {
      name: 'into a message: that message',
      rows: [file('mine'), file('old')],
      snapshot: { newestFileId: file('old').id, serverTime: 1000 },
      target: { ...target, conversationId: null, messageId: 'M000000000000000' },
      expected: file('mine').id,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const claimed = new Set(c.claimed ?? []);
      expect(await findDelivered(lister(c.rows), c.target ?? target, c.snapshot, async (id) => claimed.has(id))).toBe(c.expected);
    });
  }

  it('reads only down to the snapshot, page by page', async () => {
    const rows = [file('c'), file('b'), file('a'), file('old'), file('older'), file('oldest')];
    const list = lister(rows, 2);
    expect(await findDelivered(list, target, { newestFileId: file('old').id, serverTime: null }, never)).toBe(file('a').id);
    expect(list.paths).toHaveLength(2);
    expect(list.paths[0]).toContain('conversation_id=C000000000000000');
  });

  it('a listing that is not a page is refused, with its status', async () => {
    const busy: Lister = async () => ({ status: 503, text: '{"code":"service_unavailable"}', date: null });
    await expect(findDelivered(busy, target, { newestFileId: null, serverTime: null }, never)).rejects.toMatchObject({ status: 503 });
    const garbled: Lister = async () => ({ status: 200, text: '<html>', date: null });
    await expect(findDelivered(garbled, target, { newestFileId: null, serverTime: null }, never)).rejects.toBeInstanceOf(ListingRefused);
  });
});

describe('takeSnapshot', () => {
  it("the target's newest file and the upstream's clock", async () => {
    expect(await takeSnapshot(lister([file('new'), file('old')]), target)).toEqual({ newestFileId: file('new').id, serverTime: 1000 });
    expect(await takeSnapshot(lister([], 2, null), target)).toEqual({ newestFileId: null, serverTime: null });
  });
});

describe('sameUpload', () => {
  it('name, size, and the message when there is one', () => {
    expect(sameUpload({ filename: 'a', file_size: 1, message_id: 'm' }, { conversationId: 'c', messageId: null, filename: 'a', size: 1 })).toBe(true);
    expect(sameUpload({ filename: 'a', file_size: 1, message_id: 'm' }, { conversationId: null, messageId: 'n', filename: 'a', size: 1 })).toBe(false);
  });
});

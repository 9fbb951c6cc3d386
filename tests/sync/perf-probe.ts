// A quick, manual performance probe for the sync core (not part of the test suite):
//   npx tsx tests/sync/perf-probe.ts [conversations=2000] [files=2000] [updates=500] [uploads=50]
// Seeds the embedded test server through the API, then times, with fake-indexeddb in Node:
// an initial sync of a fresh mirror, a steady pass with nothing changed, and the replay of a
// queue of offline updates + uploads.
import { startTestServer } from '../helpers/server';
import { makeDevice, otherDevice } from './harness';

const [conversations = 2000, files = 2000, updates = 500, uploads = 50] = process.argv.slice(2).map(Number);

async function inBatches<T>(count: number, width: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += width) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, j) => work(i + j)))));
  }
  return out;
}

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  console.log(`${label}: ${((performance.now() - started) / 1000).toFixed(2)} s`);
  return result;
}

const server = await startTestServer();
try {
  const token = server.tokens.alice;
  const other = otherDevice(server.baseUrl, token);
  const convs = await timed(`seed ${conversations} conversations`, () =>
    inBatches(conversations, 50, (i) => other.createConversation({ contact_id: `probe-${i}` })),
  );
  // Files spread over a quarter of the conversations (several per conversation).
  const holders = convs.slice(0, Math.max(1, Math.floor(conversations / 4)));
  await timed(`seed ${files} files`, () =>
    inBatches(files, 50, (i) => other.upload(holders[i % holders.length]!.id, `f${i}.txt`, new TextEncoder().encode(`file ${i}`))),
  );

  const d = makeDevice(server.baseUrl, token);
  await timed('initial sync (fresh mirror)', () => d.settle());
  console.log(`  requests: ${d.net.seen.length} (scan listings: ${d.net.seen.filter((r) => r.path.includes('conversation_id=')).length})`);
  console.log(`  mirror: ${await d.db.conversations.count()} conversations, ${await d.db.files.count()} files`);
  for (let i = 0; i < 2; i++) {
    d.net.seen.length = 0;
    await timed(`steady pass ${i + 1} (nothing changed)`, () => d.engine.syncOnce());
    console.log(`  requests: ${d.net.seen.length}`);
  }

  d.net.offline = true;
  await timed(`queue ${updates} updates + ${uploads} uploads offline`, async () => {
    for (let i = 0; i < updates; i++) await d.client.updateConversation(convs[i % convs.length]!.id, { is_pinned: i % 2 === 0, is_muted: i % 3 === 0 });
    for (let i = 0; i < uploads; i++) {
      await d.client.uploadFile({ conversationId: convs[i * 3]!.id }, { name: `up${i}.bin`, type: 'application/octet-stream', bytes: new Uint8Array(64 * 1024) });
    }
  });
  await d.engine.syncOnce();
  d.net.offline = false;
  d.clock.advance(10 * 60_000);
  d.net.seen.length = 0;
  await timed('replay (push + pull)', () => d.settle());
  const writes = d.net.seen.filter((r) => r.method !== 'GET').length;
  console.log(`  requests: ${d.net.seen.length} (${writes} writes, ${d.net.seen.filter((r) => r.method === 'GET' && r.path.includes('limit=1&')).length + d.net.seen.filter((r) => /limit=1$/.test(r.path)).length} upload snapshots)`);
  console.log(`  outbox left: ${await d.db.outbox.count()}`);
  d.close();
} finally {
  await server.stop();
}

// The front of the two-instances project (tests/helpers/two-instances.ts) really alternates: of two
// live streams opened one after the other, each instance holds one.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTwoInstances, type TwoInstances } from '../helpers/two-instances';
import { openSse } from '../helpers/sse';

let s: TwoInstances;
beforeAll(async () => {
  s = await startTwoInstances();
});
afterAll(() => s?.stop());

it('requests alternate between the two instances', async () => {
  const [a, b] = s.instances;
  const auth = { authorization: `Bearer ${s.tokens.alice}` };
  const first = await openSse(`${s.baseUrl}/v1/events/stream`, auth);
  const second = await openSse(`${s.baseUrl}/v1/events/stream`, auth);
  try {
    expect([a.service.hub.size, b.service.hub.size]).toEqual([1, 1]);
    // And a change through one reaches the stream held by the other.
    const made = await fetch(`${s.baseUrl}/v1/conversations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ contact_id: 'front' }),
    }).then((r) => r.json());
    for (const stream of [first, second]) expect((await stream.next((m) => m.data.includes(made.id))).data).toContain('conversation.created');
  } finally {
    first.close();
    second.close();
  }
});

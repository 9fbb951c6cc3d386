// The page's side of the thumbnail workers: one worker per kind, started on first use; answers
// matched to questions; a worker that fails answers what it holds with null and is replaced.
import { describe, expect, it } from 'vitest';
import { thumbnailMaker, type Thumbnailed, type WorkerLike } from '../../lib/view/viewer/thumbnail-workers';

class FakeWorker implements WorkerLike {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  asked: { id: number; blob: Blob; size: number }[] = [];
  terminated = false;
  constructor(readonly kind: Thumbnailed) {}
  postMessage(message: unknown) {
    this.asked.push(message as { id: number; blob: Blob; size: number });
  }
  terminate() {
    this.terminated = true;
  }
  answer(id: number, data: object) {
    this.onmessage?.({ data: { id, ...data } } as MessageEvent);
  }
  fail() {
    this.onerror?.(new Event('error') as ErrorEvent);
  }
}

function setUp() {
  const spawned: FakeWorker[] = [];
  const make = thumbnailMaker((kind) => {
    const w = new FakeWorker(kind);
    spawned.push(w);
    return w;
  }, 96);
  return { make, spawned };
}

describe('thumbnail workers', () => {
  it('starts a worker of a kind only when a thumbnail of that kind is asked for, and matches answers to questions', async () => {
    const { make, spawned } = setUp();
    expect(spawned).toHaveLength(0);
    const first = make('image', new Blob(['a']));
    const second = make('image', new Blob(['b']));
    expect(spawned.map((w) => w.kind)).toEqual(['image']);
    const [image] = spawned;
    expect(image!.asked.map((q) => q.size)).toEqual([96, 96]);
    const bytes = new ArrayBuffer(3);
    image!.answer(image!.asked[1]!.id, { bytes, type: 'image/webp' });
    image!.answer(image!.asked[0]!.id, { error: 'not an image' });
    expect(await second).toEqual({ bytes, type: 'image/webp' });
    expect(await first).toBeNull();

    const pdf = make('pdf', new Blob(['%PDF-']));
    expect(spawned.map((w) => w.kind)).toEqual(['image', 'pdf']);
    spawned[1]!.answer(spawned[1]!.asked[0]!.id, { bytes, type: 'image/webp' });
    expect(await pdf).toEqual({ bytes, type: 'image/webp' });
  });

  it('a worker that fails (its script not loaded, a crash) answers null to what it holds, and the next thumbnail starts a new one', async () => {
    const { make, spawned } = setUp();
    const waiting = [make('pdf', new Blob(['1'])), make('pdf', new Blob(['2']))];
    spawned[0]!.fail();
    expect(await Promise.all(waiting)).toEqual([null, null]);
    expect(spawned[0]!.terminated).toBe(true);

    const again = make('pdf', new Blob(['3']));
    expect(spawned).toHaveLength(2);
    const bytes = new ArrayBuffer(1);
    spawned[1]!.answer(spawned[1]!.asked[0]!.id, { bytes, type: 'image/webp' });
    expect(await again).toEqual({ bytes, type: 'image/webp' });
  });
});

// The link between a sync engine and the real server, for the resumable-upload tests: counts the
// bytes of every upload body that went out, and cuts a PATCH mid-body when told (the server keeps
// what arrived before the cut), or holds it (a transfer that never ends: the worker dies with it
// on the wire); something may happen on the server just before a given PATCH goes.
import type { FetchLike } from '../../lib/sync/core/http';

export class Link {
  bodyBytes = 0;
  /** Decides for each PATCH: undefined = let it through; a number = cut after that many bytes. */
  cutPatch: (index: number, size: number) => number | 'hold' | undefined = () => undefined;
  /** Runs (and is waited for) just before PATCH number `index` (from 0) leaves. */
  beforePatch: (index: number) => Promise<void> | void = () => {};
  /** A flaky link: the connection drops every `bytes` of upload traffic, wherever that falls. */
  dropEvery(bytes: number): void {
    let left = bytes;
    this.cutPatch = (_index, size) => {
      if (size < left) {
        left -= size;
        return undefined;
      }
      const at = left;
      left = bytes;
      this.drops++;
      return at;
    };
  }
  drops = 0;
  patches = 0;
  readonly held: Array<() => void> = [];
  constructor(private readonly inner: () => FetchLike) {}

  readonly fetch: FetchLike = async (input, init) => {
    const body = init?.body;
    if (!(body instanceof Blob)) {
      if (body instanceof FormData) {
        for (const value of body.values()) if (value instanceof Blob) this.bodyBytes += value.size;
      }
      return this.inner()(input, init);
    }
    const bytes = new Uint8Array(await body.arrayBuffer());
    const index = init?.method === 'PATCH' ? this.patches++ : -1;
    if (index >= 0) await this.beforePatch(index);
    const decision = index >= 0 ? this.cutPatch(index, bytes.length) : undefined;
    if (decision === undefined) {
      this.bodyBytes += bytes.length;
      return this.inner()(input, init);
    }
    const limit = decision === 'hold' ? Math.floor(bytes.length / 2) : Math.min(decision, bytes.length);
    this.bodyBytes += limit;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(bytes.slice(0, limit));
        const cut = () => controller.error(new TypeError('network connection lost'));
        if (decision === 'hold') this.held.push(cut);
        else setTimeout(cut, 30); // what was written reaches the server first
      },
    });
    return this.inner()(input, { ...init, body: stream, duplex: 'half' } as RequestInit);
  };
}

// The bytes of a tus request: read to the end when refused, cut where they break, digested on the way.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { chunkBytes } from '../chunks';

/** A refused request's body is read and thrown away up to this much, so the client hears the answer. */
const DISCARD_LIMIT = 64 * 1024 * 1024;
/** The first bytes of a file kept for sniffing its type (as POST /v1/files keeps them). */
export const HEAD_BYTES = 512;

/** Reads and throws away what the client is still sending (bounded), so that it hears the answer. */
export function discardBody(body: Readable | null): void {
  if (!body || body.destroyed || body.readableEnded) return;
  let seen = 0;
  body.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DISCARD_LIMIT) body.destroy();
  });
  body.on('error', () => {});
  body.resume();
}

/** The bytes of a request body, until it ends or breaks: a broken body ends what was received so far. */
export async function* untilBroken(body: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) yield chunkBytes(chunk);
  } catch {
    // cut short: what arrived is what there is
  }
}

/** What completion needs of the bytes besides the bytes: their SHA-256 and the first ones, for sniffing. */
export interface Digest {
  sha256: string;
  head: Uint8Array;
}

/** Takes the SHA-256 and the first HEAD_BYTES of what passes through `tap`. */
export class Digesting {
  private readonly hash: Hash = createHash('sha256');
  private readonly head: Buffer[] = [];
  private headSize = 0;

  take(chunk: Buffer): void {
    this.hash.update(chunk);
    if (this.headSize < HEAD_BYTES) {
      this.head.push(chunk.subarray(0, HEAD_BYTES - this.headSize));
      this.headSize += Math.min(chunk.length, HEAD_BYTES - this.headSize);
    }
  }

  /** A pass-through stream that digests what flows. */
  tap(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        this.take(chunk);
        done(null, chunk);
      },
    });
  }

  digest(): Digest {
    return { sha256: this.hash.digest('hex'), head: new Uint8Array(Buffer.concat(this.head)) };
  }
}

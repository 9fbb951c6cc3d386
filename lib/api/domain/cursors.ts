// Change-feed cursors, opaque and per user. Inside, a cursor is the `seq` of the last event a client
// has seen; outside, it is one AES-128 block (ECB: a single block, so a plain pseudo-random
// permutation) over [seq: 8 bytes big-endian | tag: the first 8 bytes of HMAC(key, user id)],
// base64url (22 characters). So:
// - nothing about one user's cursors tells anything about other users' writes: the numbers (and
//   the gaps between a user's own event ids) are hidden, and every check a cursor goes through
//   depends on that user's own events only (see events.ts);
// - a cursor is only accepted from the user it was issued to, by the database that issued it (the
//   key derives from the database's own secret): another user's, another database's (or a reset
//   one's), a cursor of the older decimal form, or a forged one answers 410 events_expired and the
//   client lists everything again. Input that is not shaped like a cursor at all is 400.
// - `0` is every user's cursor of the feed's beginning (the app reads the history from it, to place
//   files without listing them per conversation): it says nothing but "from my first event", and
//   answers 410 once some of that user's events were purged.
import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
import { ApiError, invalid } from '../errors';

const CURSOR = /^[A-Za-z0-9_-]{22}$/;
/** The decimal cursors of earlier versions: not accepted any more, but answered "relist", not "bad request". */
const LEGACY_CURSOR = /^\d{1,15}$/;
const TAGS_CACHED = 10_000;
/** The feed's beginning, the same for everyone. */
export const BEGINNING = '0';

export const eventsExpired = () =>
  new ApiError(
    'events_expired',
    'This cursor is older than the change feed keeps (or not one this feed issued to you): list everything again, then follow the feed from GET /v1/events?limit=0',
    'after',
  );

export class CursorCodec {
  private readonly key: Buffer;
  private readonly tagKey: Buffer;
  private readonly tags = new Map<string, Buffer>();

  /** `secret`: the database's own secret; the keys are derived from it with labels of their own. */
  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('parley/events/cursor-key/v1').digest().subarray(0, 16);
    this.tagKey = createHmac('sha256', secret).update('parley/events/cursor-user-tag/v1').digest();
  }

  private tag(user: string): Buffer {
    let tag = this.tags.get(user);
    if (!tag) {
      tag = createHmac('sha256', this.tagKey).update(user).digest().subarray(0, 8);
      if (this.tags.size >= TAGS_CACHED) this.tags.clear();
      this.tags.set(user, tag);
    }
    return tag;
  }

  encode(user: string, seq: number): string {
    const block = Buffer.alloc(16);
    block.writeBigUInt64BE(BigInt(seq), 0);
    this.tag(user).copy(block, 8);
    const cipher = createCipheriv('aes-128-ecb', this.key, null).setAutoPadding(false);
    return Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url');
  }

  /** The seq inside `user`'s cursor; 400 for what is not shaped like a cursor, 410 for one that is not theirs. */
  decode(user: string, cursor: string, param = 'after'): number {
    if (cursor === BEGINNING) return 0;
    if (LEGACY_CURSOR.test(cursor)) throw eventsExpired();
    if (!CURSOR.test(cursor)) throw invalid(param, `${param} must be a cursor from this feed (the id of an event, or next)`);
    const decipher = createDecipheriv('aes-128-ecb', this.key, null).setAutoPadding(false);
    const block = Buffer.concat([decipher.update(Buffer.from(cursor, 'base64url')), decipher.final()]);
    if (!block.subarray(8).equals(this.tag(user))) throw eventsExpired();
    const seq = block.readBigUInt64BE(0);
    if (seq > BigInt(Number.MAX_SAFE_INTEGER)) throw eventsExpired();
    return Number(seq);
  }
}

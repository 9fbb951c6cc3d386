// Who a token belongs to, asked of the server. GET /v1/me says it outright where the server has
// that extension. Where it does not, "same user as this database?" is still answerable: a
// conversation id the database mirrored answers 200 to the same user's token and 404 to anyone
// else's (another user's resource is answered like a missing one).
import { Conversation, ConversationPage, Me } from '../../objects';
import type { ParleyDb } from '../mirror/db';
import { someServerConversationIds } from '../mirror/server-word';
import { call, type FetchLike } from '../core/http';

export interface ServerAccess {
  fetch: FetchLike;
  /** Origin (or prefix) that `v1/...` paths are resolved against. */
  baseUrl: string;
  /** An answer that does not come in time counts as "unreachable". Default: no limit. */
  requestTimeoutMs?: number;
}

/** The network or the server failed the question; the token itself may be fine. */
export type CheckFailure = 'rejected' | 'unreachable' | 'server';

export type WhoAmI =
  /** GET /v1/me answered. */
  | { kind: 'user'; id: string }
  /** The token works, but the server has no /v1/me (a server with only the brief's interface). */
  | { kind: 'unnamed' }
  | { kind: CheckFailure };

function access({ fetch, baseUrl, requestTimeoutMs }: ServerAccess): ServerAccess {
  return { fetch, baseUrl, requestTimeoutMs };
}

function failure(kind: string): CheckFailure {
  return kind === 'unauthenticated' ? 'rejected' : kind === 'network' ? 'unreachable' : 'server';
}

/** Asks whose token this is; also checks that the server accepts it at all. */
export async function whoAmI(server: ServerAccess, token: string): Promise<WhoAmI> {
  const http = { ...access(server), getToken: () => token };
  const me = await call(http, { method: 'GET', path: 'v1/me' }, Me);
  if (me.kind === 'ok') return { kind: 'user', id: me.value.id };
  if (me.kind !== 'refused') return { kind: failure(me.kind) };
  // No such route (404, or 405 where something else lives there). A server may route before it
  // authenticates, so the token is not known to be good yet: ask something every server has.
  const list = await call(http, { method: 'GET', path: 'v1/conversations', query: { limit: 1 } }, ConversationPage);
  if (list.kind === 'ok') return { kind: 'unnamed' };
  return { kind: list.kind === 'refused' ? 'server' : failure(list.kind) };
}

export type Probe =
  /** One of the database's conversations answered 200: the token's user is the database's. */
  | { kind: 'same' }
  /** Every one answered 404: the token belongs to someone else (or they were all deleted). */
  | { kind: 'other' }
  /** The database holds no conversation the server gave it: nothing to ask with. */
  | { kind: 'nothing-to-probe' }
  | { kind: CheckFailure };

/** How many mirrored conversations a probe asks about (one deleted meanwhile must not mislead). */
export const PROBE_IDS = 3;

/** Real server ids of conversations this database mirrored (never `local_` temp ids). */
export async function probeIdsOf(db: ParleyDb, count = PROBE_IDS): Promise<string[]> {
  return someServerConversationIds(db, count);
}

/** Does `token` belong to the user whose conversations `ids` are? */
export async function probeSameUser(server: ServerAccess, token: string, ids: readonly string[]): Promise<Probe> {
  if (ids.length === 0) return { kind: 'nothing-to-probe' };
  const http = { ...access(server), getToken: () => token };
  for (const id of ids) {
    const out = await call(http, { method: 'GET', path: `v1/conversations/${id}` }, Conversation);
    if (out.kind === 'ok') return { kind: 'same' };
    if (out.kind === 'refused' && out.status === 404) continue;
    return { kind: out.kind === 'refused' ? 'server' : failure(out.kind) };
  }
  return { kind: 'other' };
}

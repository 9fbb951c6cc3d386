// Test harness for the sync core: a fresh IndexedDB per device, a fault-injecting fetch that
// sits between the engine and the REAL embedded server, and a direct view of the server.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { Conversation, ConversationPage, FileObject, FilePage } from '../../lib/schemas';
import { createSyncClient, type SyncClient } from '../../lib/sync/outbox/client';
import { inputValidators } from '../../lib/sync/outbox/validate-input';
import { openSyncDb, type ParleyDb } from '../../lib/sync/mirror/db';
import type { Clock } from '../../lib/sync/core/clock';
import { SyncEngine, type EngineDeps } from '../../lib/sync/engine/engine';
import type { FetchLike } from '../../lib/sync/core/http';
import { blockedOpIds } from '../../lib/sync/mirror/blocking';

/** Server env for one with only the contract's endpoints (plus idempotency and /v1/me): no change feed. */
export const PLAIN = { PARLEY_EXTENSIONS: 'idempotency,me' };

export type Fault =
  /** The request never reaches the server. */
  | 'offline'
  /** The request reaches the server, which acts; the response is then lost. */
  | 'lose-response'
  /** A slow link: the request leaves after this many (real) milliseconds. */
  | { delayMs: number }
  /** A synthetic answer; the server never sees the request. */
  | { status: number; headers?: Record<string, string>; body?: unknown }
  /** Something happens elsewhere (another device acts) just before this request is sent. */
  | { before: () => Promise<void> };

export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** A JSON or form body as sent (null: none, or bytes). */
  body: string | null;
  fault: Fault | null;
}

/** Wraps the real fetch: scripted faults first, then a standing mode. */
export class FaultyNetwork {
  offline = false;
  private script: Array<{ when: (method: string, path: string) => boolean; fault: Fault }> = [];
  readonly seen: SeenRequest[] = [];
  /** Called when a delayed request has started (it is in flight from then on). */
  onDelay: (() => void) | null = null;

  /** Apply `fault` to the next request that matches (method and a path regexp). */
  inject(fault: Fault, method?: string, path?: RegExp): void {
    this.script.push({ when: (m, p) => (!method || m === method) && (!path || path.test(p)), fault });
  }

  pendingFaults(): number {
    return this.script.length;
  }

  clear(): void {
    this.script = [];
    this.offline = false;
  }

  /** Open live streams (GET /v1/events/stream), which tests can cut or silence. */
  readonly streams = new Set<LiveStreamControl>();

  /**
   * Rewrites the live streams' messages, as something between the server and the app could: each
   * complete SSE message (its lines, without the blank line that ends it) is replaced by what this
   * returns (nothing: dropped; two: sent twice). Null: the bytes pass as they are.
   */
  streamFilter: ((message: string) => string[]) | null = null;

  /** Cuts every open live stream, as a network drop would. */
  dropStreams(): void {
    for (const stream of this.streams) stream.drop();
  }

  readonly fetch: FetchLike = async (input, init) => {
    const response = await this.send(input, init);
    if (!new URL(input).pathname.startsWith('/v1/events/stream') || !response.body) return response;
    return this.controlled(response);
  };

  /** Passes a stream's bytes through, until the test drops it or makes it go silent. */
  private controlled(response: Response): Response {
    const upstream = response.body!.getReader();
    let stalled = false;
    let control: LiveStreamControl;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        control = {
          drop: () => {
            this.streams.delete(control);
            controller.error(new TypeError('network connection lost'));
            void upstream.cancel().catch(() => {});
          },
          stall: () => {
            stalled = true;
          },
        };
        this.streams.add(control);
        void (async () => {
          const decoder = new TextDecoder();
          const encoder = new TextEncoder();
          let text = '';
          try {
            for (;;) {
              const chunk = await upstream.read();
              if (chunk.done) {
                controller.close();
                break;
              }
              if (stalled) continue;
              if (!this.streamFilter) {
                controller.enqueue(chunk.value);
                continue;
              }
              text += decoder.decode(chunk.value, { stream: true });
              let out = '';
              for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
                const message = text.slice(0, end);
                text = text.slice(end + 2);
                for (const sent of this.streamFilter(message)) out += `${sent}\n\n`;
              }
              if (out) controller.enqueue(encoder.encode(out));
            }
          } catch (error) {
            try {
              controller.error(error);
            } catch {
              // already dropped
            }
          } finally {
            this.streams.delete(control);
          }
        })();
      },
      cancel: (reason) => upstream.cancel(reason),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  }

  private send: FetchLike = async (input, init) => {
    const method = init?.method ?? 'GET';
    const url = new URL(input);
    const path = url.pathname + url.search;
    const index = this.script.findIndex((s) => s.when(method, path));
    const fault: Fault | null = this.offline ? 'offline' : index >= 0 ? this.script.splice(index, 1)[0]!.fault : null;
    if (process.env.NETLOG) console.log('fetch', method, path, fault);
    this.seen.push({ method, path, headers: { ...(init?.headers as Record<string, string>) }, body: typeof init?.body === 'string' ? init.body : null, fault });
    // As Node's fetch fails when there is no route to the server: no connection was made.
    if (fault === 'offline') throw new TypeError('fetch failed (offline)', { cause: Object.assign(new Error('connect ENETUNREACH'), { code: 'ENETUNREACH' }) });
    if (fault === 'lose-response') {
      const response = await fetch(input, init);
      await response.arrayBuffer(); // let the server finish; then the answer never arrives
      throw new TypeError('fetch failed (connection reset)');
    }
    if (fault && 'before' in fault) {
      await fault.before();
      return fetch(input, init);
    }
    if (fault && 'delayMs' in fault) {
      this.onDelay?.();
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      return fetch(input, init);
    }
    if (fault) {
      return new Response(fault.body === undefined ? null : JSON.stringify(fault.body), {
        status: fault.status,
        headers: { 'content-type': 'application/json', ...fault.headers },
      });
    }
    const response = await fetch(input, init);
    // A live stream's body never ends: its status only.
    if (process.env.NETLOG) {
      const streamed = response.headers.get('content-type')?.startsWith('text/event-stream');
      console.log('  ->', response.status, typeof init?.body === 'string' ? init.body.slice(0, 120) : '', streamed ? '(stream)' : (await response.clone().text()).slice(0, 160));
    }
    return response;
  };
}

export interface LiveStreamControl {
  /** The connection breaks. */
  drop(): void;
  /** The connection stays open but nothing more arrives (a dead link the socket does not notice). */
  stall(): void;
}

/** A clock tests move by hand; timers never fire on their own (tests call syncOnce). */
export class ManualClock implements Clock {
  constructor(public time = 1_700_000_000_000) {}
  now() {
    return this.time;
  }
  advance(ms: number) {
    this.time += ms;
  }
  setTimeout(): unknown {
    return null;
  }
  clearTimeout(): void {}
}

export interface Device {
  db: ParleyDb;
  client: SyncClient;
  engine: SyncEngine;
  net: FaultyNetwork;
  clock: ManualClock;
  /** Sync repeatedly (advancing the clock past any backoff) until nothing is left to do. */
  settle(maxRounds?: number): Promise<void>;
  setToken(token: string): void;
  close(): void;
}

let deviceCounter = 0;

export function makeDevice(
  baseUrl: string,
  token: string,
  options: { indexedDB?: IDBFactory; name?: string; engine?: Partial<EngineDeps> } = {},
): Device {
  const indexedDB = options.indexedDB ?? new IDBFactory();
  const db = openSyncDb(options.name ?? `test-${++deviceCounter}`, { indexedDB, IDBKeyRange });
  const net = new FaultyNetwork();
  const clock = new ManualClock();
  let currentToken = token;
  const engine = new SyncEngine({
    db,
    fetch: net.fetch,
    baseUrl,
    getToken: () => currentToken,
    clock,
    random: () => 0.5,
    requestTimeoutMs: 5_000,
    backoff: { baseMs: 1_000, maxMs: 60_000 },
    ...options.engine,
  });
  const client = createSyncClient(db, { validate: inputValidators, now: () => clock.now() });
  return {
    db,
    client,
    engine,
    net,
    clock,
    async settle(maxRounds = 20) {
      let report: Awaited<ReturnType<SyncEngine['syncOnce']>> | null = null;
      for (let round = 0; round < maxRounds; round++) {
        report = await engine.syncOnce();
        // Settled: nothing left that can go (failed operations and those blocked by them wait for
        // the user). Counted from the outbox, not the status: the app's bookkeeping (the
        // last_opened_at report) is not pending there, but it has to go too.
        const ordered = await db.outbox.orderBy('seq').toArray();
        const blocked = blockedOpIds(ordered);
        const pendingCount = ordered.filter((op) => op.state !== 'failed' && !blocked.has(op.id)).length;
        if (report.push.kind === 'done' && report.pull?.kind === 'done' && pendingCount === 0) return;
        if (report.push.kind === 'unauthenticated') throw new Error('device needs sign-in');
        clock.advance(10 * 60_000);
      }
      const ops = await db.outbox.toArray();
      throw new Error(`sync did not settle: ${JSON.stringify(report)} ${JSON.stringify(ops.map(({ body, state, error, entityId }) => ({ body, state, error, entityId })))}`);
    },
    setToken(next: string) {
      currentToken = next;
    },
    close() {
      db.close();
    },
  };
}

// ---- The server as it really is, read directly (not through the engine). ----

async function getJson(baseUrl: string, token: string, path: string): Promise<unknown> {
  const response = await fetch(baseUrl + path, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

export async function serverConversations(baseUrl: string, token: string): Promise<Conversation[]> {
  const out: Conversation[] = [];
  let after = '';
  for (;;) {
    const page = ConversationPage.parse(await getJson(baseUrl, token, `/v1/conversations?limit=100${after}`));
    out.push(...page.data);
    if (!page.has_more) return out;
    after = `&starting_after=${page.data.at(-1)!.id}`;
  }
}

export async function serverFiles(baseUrl: string, token: string, conversationId?: string): Promise<FileObject[]> {
  const out: FileObject[] = [];
  let after = '';
  const scope = conversationId ? `&conversation_id=${conversationId}` : '';
  for (;;) {
    const page = FilePage.parse(await getJson(baseUrl, token, `/v1/files?limit=100${scope}${after}`));
    out.push(...page.data);
    if (!page.has_more) return out;
    after = `&starting_after=${page.data.at(-1)!.id}`;
  }
}

/** Every server file with the conversation it is in, via per-conversation listings. */
export async function serverFilesWithConversation(baseUrl: string, token: string) {
  const result = new Map<string, { file: FileObject; conversationId: string }>();
  for (const c of await serverConversations(baseUrl, token)) {
    for (const file of await serverFiles(baseUrl, token, c.id)) result.set(file.id, { file, conversationId: c.id });
  }
  return result;
}

/** Another device acting directly on the server. */
export function otherDevice(baseUrl: string, token: string) {
  async function send(method: string, path: string, body?: BodyInit, json?: unknown) {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (json !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(baseUrl + path, { method, headers, body: json !== undefined ? JSON.stringify(json) : body });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  }
  return {
    send,
    async createConversation(input: { contact_id?: string; group_id?: string }): Promise<Conversation> {
      const r = await send('POST', '/v1/conversations', undefined, input);
      if (r.status === 409) return Conversation.parse((await send('GET', `/v1/conversations/${r.body!.existing_id}`)).body);
      if (r.status !== 201) throw new Error(`create: ${r.status}`);
      return Conversation.parse(r.body);
    },
    async upload(conversationId: string, name: string, bytes: Uint8Array): Promise<FileObject> {
      const form = new FormData();
      form.append('conversation_id', conversationId);
      form.append('file', new Blob([bytes as BlobPart], { type: 'text/plain' }), name);
      const r = await send('POST', '/v1/files', form);
      if (r.status !== 201) throw new Error(`upload: ${r.status} ${JSON.stringify(r.body)}`);
      return FileObject.parse(r.body);
    },
  };
}

/** The mirror, stripped to what the server has, for comparison with the server. */
export async function mirrorState(db: ParleyDb) {
  const conversations = (await db.conversations.toArray()).map(({ syncState: _s, ...c }) => c);
  const files = (await db.files.toArray()).map(({ syncState: _s, ...f }) => f);
  return { conversations, files };
}

export const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Real timers, with every requested delay recorded (to see which period an engine chose). */
export class RecordingClock implements Clock {
  readonly delays: number[] = [];
  now() {
    return Date.now();
  }
  setTimeout(fn: () => void, ms: number) {
    this.delays.push(ms);
    return setTimeout(fn, ms);
  }
  clearTimeout(handle: unknown) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  }
}

/** Waits for a condition the system reaches on its own (bounded by the test's timeout). */
export async function until(check: () => boolean | Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}

/** Deletes every conversation of the token's user on the server; the device that did it. */
export async function cleanSlate(baseUrl: string, token: string) {
  const other = otherDevice(baseUrl, token);
  for (const c of await serverConversations(baseUrl, token)) await other.send('DELETE', `/v1/conversations/${c.id}`);
  return other;
}

/**
 * What navigator.locks gives tabs: one holder at a time, the others queue. (The real Web Locks
 * path — pages of the built app in Chromium — is tests/browser/tabs.spec.ts.)
 */
export function sharedLock() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T,>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn);
    tail = run.catch(() => {});
    return run;
  };
}

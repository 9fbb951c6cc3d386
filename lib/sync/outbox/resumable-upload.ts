// Resumable uploads (tus 1.0.0 at /v1/uploads, when the server offers it): the outbox's upload
// sent through tus-js-client, in the sync worker only (the page never loads this module).
//
// - The bytes come from IndexedDB, chunk by chunk: a FileSource whose slice(start, end) reads only
//   the stored chunks that range needs (one PATCH's worth, PATCH_BYTES), never the whole file.
// - The upload URL is written into the operation (`op.tus.url`) as soon as the creation answers,
//   before any PATCH goes, so a cut, a reload or a crash resumes from the server's offset (HEAD).
// - Exactly once: the creation carries Idempotency-Key = the operation's key (a lost creation
//   answer gives the same upload on a repeat); only the upload whose URL we hold can complete, and
//   its completion (or a later HEAD) names the file (Upload-File-Id): one file, whatever is lost.
//   A URL the server no longer knows (404, 410 upload_expired) starts a new upload from the queued
//   bytes under a new creation key (`generation`), written before that creation is sent.
// - A file that fits in one request (at most `patchBytes`) goes with its creation
//   (creation-with-upload): one POST, whose answer names the file and, asked with `Prefer:
//   return=representation`, carries it (no GET after). Only where the server honours
//   Idempotency-Key: the upload's URL is unknown until that answer comes, so after a cut the
//   creation is asked for again under the same key, without the bytes (`bytesKey`), and the server
//   answers with the same upload (HEAD, then resume or done). Larger files: a creation without
//   bytes, its URL kept, then PATCHes.
// - No fixed time limit: a request is abandoned when no byte has moved for `stallMs`; the next
//   attempt resumes from HEAD.
// - Every answer is classified by core/classify.ts, as http.ts's are; what it means for tus (an
//   upload gone, an offset mismatch) is decided here from the classified outcome. Failures are
//   settled by the replay like any other (backoff, 401 stop, dead letter with the server's message).
import { Upload, type FileReader as TusFileReader, type FileSource, type HttpRequest, type HttpResponse, type HttpStack } from 'tus-js-client';
import { FileObject, type FileObject as FileObjectT } from '../../objects';
import type { ParleyDb } from '../mirror/db';
import { getMeta, setMeta } from '../mirror/meta';
import type { HttpDeps, Outcome } from '../core/http';
import { classify, gone } from '../core/classify';
import { tusNoted, type OutboxOp, type TusState } from './lifecycle';
import { openStoredChunks } from './chunks';

/** What the sync worker hands the engine (EngineDeps.resumable): the replay's tus side. */
export interface ResumableUploads {
  offered(deps: TusDeps): Promise<Outcome<boolean>>;
  send: typeof sendResumable;
  atClaim: typeof bytesKeyAtClaim;
}

export const resumableUploads: ResumableUploads = {
  offered: (deps) => uploadsOffered(deps),
  send: (...args) => sendResumable(...args),
  atClaim: (...args) => bytesKeyAtClaim(...args),
};

/** What the server offers for uploads, remembered per database (meta `uploads`). */
export const UPLOADS_KEY = 'uploads';

declare module '../mirror/meta' {
  interface MetaValues {
    uploads: UploadsState;
  }
}
/** How long "this server has no resumable uploads" is believed before asking again. */
export const RECHECK_PLAIN_MS = 60 * 60_000;
/** Bytes per PATCH: what is read from IndexedDB (and held) at once. */
export const PATCH_BYTES = 4 * 1024 * 1024;
/** A request is abandoned when no byte has moved (or no answer come) for this long. */
export const STALL_MS = 30_000;
/**
 * After a cut, the server may not yet have noticed the dead request: its offset (HEAD) can be
 * behind what it will record, and a PATCH from there is refused (409) once it does — after its
 * body has travelled. So a resumed upload first sends a small PATCH; full ones follow once the
 * server took it.
 */
export const PROBE_BYTES = 64 * 1024;
/** How often a running transfer looks whether the user cancelled it (one read of its outbox row). */
export const CANCEL_POLL_MS = 250;
/** Restarts within one attempt (409 offset mismatch, an expired URL, a replayed creation) without progress. */
const MAX_RESTARTS = 4;

export interface UploadsState {
  server: 'tus' | 'plain';
  checkedAt: number;
}

export interface TusDeps extends HttpDeps {
  db: ParleyDb;
  now: () => number;
  /** Abandon a request after this long without a byte moving (default STALL_MS). */
  stallMs?: number;
  /** Bytes per PATCH (default PATCH_BYTES); tests use small ones. */
  patchBytes?: number;
  /** How often a running transfer checks for the user's cancel (default CANCEL_POLL_MS). */
  cancelPollMs?: number;
  /**
   * The server is known to honour Idempotency-Key: a small file may then go with its creation
   * (a repeat of that creation, after a lost answer, gives the same upload rather than a second).
   */
  idempotent?: boolean;
}

/**
 * Does the server offer tus at /v1/uploads? `OPTIONS /v1/uploads` answers Tus-Version there; 404
 * or 405 (the contract alone) means plain. Remembered in meta; plain is asked again after an hour.
 * A failure to ask (network, 5xx) is returned as it is: the upload waits like any request.
 */
export async function uploadsOffered(deps: TusDeps): Promise<Outcome<boolean>> {
  const known = await getMeta(deps.db, UPLOADS_KEY);
  if (known && (known.server === 'tus' || deps.now() - known.checkedAt < RECHECK_PLAIN_MS)) {
    return { kind: 'ok', value: known.server === 'tus', replayed: false, serverTime: null };
  }
  let response: Response;
  try {
    response = await withStall(deps.stallMs ?? STALL_MS, (controller) => deps.fetch(urlOf(deps.baseUrl, 'v1/uploads'), { method: 'OPTIONS', signal: controller.signal }));
  } catch (error) {
    return { kind: 'network', message: messageOf(error), unreachable: deps.isOffline?.() === true };
  }
  const answer = classify(response.status, response.headers, await response.text().catch(() => ''));
  const version = response.headers.get('tus-version');
  let tus: boolean;
  if (answer.kind === 'ok' && version !== null && version.split(',').map((v) => v.trim()).includes('1.0.0')) tus = true;
  else if (answer.kind === 'ok' || (answer.kind === 'refused' && (answer.status === 404 || answer.status === 405))) tus = false;
  else return answer;
  await setMeta(deps.db, UPLOADS_KEY, { server: tus ? 'tus' : 'plain', checkedAt: deps.now() });
  return { kind: 'ok', value: tus, replayed: false, serverTime: null };
}

/** The creation's Idempotency-Key: the operation's own, then a new one per restarted upload. */
export function creationKey(key: string, tus: TusState): string {
  return tus.generation === 0 ? key : `${key}~tus${tus.generation}`;
}

/**
 * The tus state the replay's claim stores with an upload that will go whole with its creation:
 * its creation key as `bytesKey`, which must be on disk before that creation is sent (see the head
 * of this file). Written by the claim, the transaction that marks the operation in flight anyway,
 * rather than by a transaction of its own per upload (each a wait for the disk, one after another).
 * Null when the upload goes another way: a URL known, a server without keys or whose uploads are
 * not known to be tus, a file too large or empty, a creation with bytes maybe sent already, a POST
 * /v1/files whose outcome is unknown (replay.ts `resumable`), a cancelled upload. A claim given
 * back unsent gives this back too (lifecycle.ts `release`); one cut by a crash leaves it, and the
 * upload is then asked for without its bytes: a new upload, as no creation was sent.
 */
export function bytesKeyAtClaim(op: OutboxOp, key: string, known: { tus: boolean; idempotent: boolean }, patchBytes = PATCH_BYTES): TusState | null {
  if (op.body.kind !== 'file.upload' || op.cancelledUpload || !known.tus || !known.idempotent) return null;
  if (!op.tus && op.outcomeUnknown) return null;
  const state = op.tus ?? { url: null, generation: 0 };
  if (state.url !== null || op.body.size <= 0 || op.body.size > patchBytes || state.bytesKey === creationKey(key, state)) return null;
  return { ...state, bytesKey: creationKey(key, state) };
}

/** Statistics of one attempt (for tests and the report of progress). */
export interface TusAttempt {
  /** The file's id once the upload is complete. */
  outcome: Outcome<string>;
  /** The file as the completion's answer carried it (Prefer: return=representation), when it did. */
  file?: FileObjectT;
  /** The upload's URL when the completion was its creation (not kept in the operation: it is done). */
  url?: string;
  /** Whether the operation's request went out (so the outcome may be unknown). */
  sent: boolean;
  /** The server's offset grew during this attempt (a retry need not back off as if nothing moved). */
  progressed: boolean;
  /**
   * The user cancelled the upload while it ran (its outbox row became a cancellation, its queued
   * bytes went): the transfer was aborted; the replay goes on with the cancellation.
   */
  cancelled?: boolean;
}

/**
 * Sends (or resumes) the operation's upload through tus until complete or a failure the replay
 * must settle. `key`: the operation's Idempotency-Key. Returns the created file's id.
 */
export async function sendResumable(
  deps: TusDeps,
  op: OutboxOp,
  key: string,
  onProgress?: (sent: number, total: number, resumed: boolean, onServer: number) => void,
  /** This attempt's claim stored `bytesKey` (bytesKeyAtClaim): no creation under it has been sent yet. */
  bytesKeyClaimed = false,
): Promise<TusAttempt> {
  if (op.body.kind !== 'file.upload') throw new Error('not an upload');
  const body = op.body;
  const state: TusState = { ...(op.tus ?? { url: null, generation: 0 }) };
  // True until the claimed creation with bytes is sent.
  let claimedUnsent = bytesKeyClaimed && state.url === null && state.bytesKey === creationKey(key, state);
  const save = async (next: TusState) => {
    Object.assign(state, next);
    await deps.db.outbox.update(op.seq, tusNoted(state));
  };
  const patchBytes = deps.patchBytes ?? PATCH_BYTES;
  // The whole file with its creation (see the head of this file): a new upload of a file that
  // fits in one request, on a server with keys, unless a creation with bytes under this key was
  // sent already (its answer lost: ask for that upload again, without them).
  const withBytes = () =>
    state.url === null && deps.idempotent === true && body.size > 0 && body.size <= patchBytes && (claimedUnsent || state.bytesKey !== creationKey(key, state));
  if (!op.tus && !withBytes()) await save(state);

  const isCancelled = async () => (await deps.db.outbox.get(op.seq))?.cancelledUpload !== undefined;
  const source = await openSource(deps.db, op.id, body.size, body.chunkCount);
  if (!source && (await isCancelled())) return { outcome: { kind: 'network', message: 'cancelled' }, sent: false, progressed: false, cancelled: true };
  if (!source) {
    return { outcome: { kind: 'refused', status: 0, code: null, error: null, message: 'the bytes of this upload are missing on this device' }, sent: false, progressed: false };
  }

  let sent = false;
  let progressed = false;
  let startOffset: number | null = null;
  let lastOffset: number | null = null;
  // Resuming an upload that was interrupted: a small PATCH first (see PROBE_BYTES).
  let probe = state.url !== null;
  for (let restarts = 0; restarts <= MAX_RESTARTS; ) {
    const chunk = probe && state.url !== null ? Math.min(PROBE_BYTES, patchBytes) : patchBytes;
    if (await isCancelled()) return { outcome: { kind: 'network', message: 'cancelled' }, sent, progressed, cancelled: true };
    const bytes = withBytes();
    // Written before it is sent (by the claim, or here): from then on the upload may exist with
    // its URL unknown here.
    if (bytes && !claimedUnsent) await save({ ...state, bytesKey: creationKey(key, state) });
    claimedUnsent = false;
    const run = await runOnce(deps, body, key, state, save, source, chunk, chunk < patchBytes, bytes, isCancelled, (s, total, onServer) => {
      if (startOffset === null) startOffset = s;
      if (lastOffset !== null && s > lastOffset) progressed = true;
      lastOffset = s;
      onProgress?.(s, total, (startOffset ?? 0) > 0, onServer);
    });
    sent = sent || run.sent;
    if (run.kind === 'done') return { outcome: { kind: 'ok', value: run.fileId, replayed: false, serverTime: null }, file: run.file, url: run.url, sent, progressed };
    if (run.kind === 'failed') return { outcome: run.outcome, sent, progressed };
    if (run.kind === 'cancelled') return { outcome: { kind: 'network', message: 'cancelled' }, sent, progressed, cancelled: true };
    // The small PATCH was taken: full ones from here. Otherwise (a 409 offset mismatch, a replayed
    // creation, an upload the server forgot) HEAD and go on, carefully again.
    probe = !run.probed;
    if (!run.progressed) restarts++;
    else progressed = true;
  }
  return { outcome: { kind: 'server', status: 409, message: 'the upload could not be resumed; trying again later' }, sent, progressed };
}

type Run =
  | { kind: 'done'; fileId: string; file?: FileObjectT; url?: string; sent: boolean }
  | { kind: 'failed'; outcome: Exclude<Outcome<unknown>, { kind: 'ok' }>; sent: boolean }
  | { kind: 'restart'; sent: boolean; progressed: boolean; probed?: boolean }
  /** The user cancelled it (the transfer is aborted). */
  | { kind: 'cancelled'; sent: boolean };

/** The queued bytes are gone mid-transfer: the user cancelled the upload. */
class Cancelled extends Error {
  constructor() {
    super('the upload was cancelled');
  }
}

/** A request's answer that ends this run of tus-js-client (thrown from the HTTP stack). */
class Stop extends Error {
  constructor(readonly run: Run) {
    super('stop');
  }
}

/**
 * One tus-js-client Upload, from start (HEAD when a URL is known, else POST) to success or failure.
 * `withBytes`: the creation carries the file (it fits in one request: `chunkSize` ≥ its size).
 */
function runOnce(
  deps: TusDeps,
  body: Extract<OutboxOp['body'], { kind: 'file.upload' }>,
  key: string,
  state: TusState,
  save: (next: TusState) => Promise<void>,
  source: IdbSource,
  chunkSize: number,
  probing: boolean,
  withBytes: boolean,
  isCancelled: () => Promise<boolean>,
  /** `sent`: tus-js-client's count (in flight included); `onServer`: the last Upload-Offset the server answered (0 before any). */
  onProgress: (sent: number, total: number, onServer: number) => void,
): Promise<Run> {
  const endpoint = urlOf(deps.baseUrl, 'v1/uploads');
  const flags = { sent: false, progressed: false, offset: -1 };
  let watch: ReturnType<typeof setInterval> | undefined;
  return new Promise<Run>((settle) => {
    let settled = false;
    const resolve = (run: Run) => {
      if (settled) return;
      settled = true;
      clearInterval(watch);
      settle(run);
    };
    const stack = new WorkerHttpStack(deps, async (request, response) => {
      // Runs on every answer, before tus-js-client sees it. Throwing a Stop ends the run.
      const method = request.getMethod();
      if (method !== 'HEAD') flags.sent = true;
      const offset = Number.parseInt(response.headers.get('upload-offset') ?? '', 10);
      if (Number.isFinite(offset)) {
        if (flags.offset >= 0 && offset > flags.offset) flags.progressed = true;
        flags.offset = Math.max(flags.offset, offset);
      }
      const fileId = response.headers.get('upload-file-id');
      if (response.ok && fileId) {
        const location = method === 'POST' ? response.headers.get('location') : null;
        const url = location ? new URL(location, endpoint).toString() : undefined;
        throw new Stop({ kind: 'done', fileId, file: await representation(response, fileId), url, sent: flags.sent });
      }
      if (method === 'POST' && response.ok) {
        const location = response.headers.get('location');
        if (!location) throw new Stop({ kind: 'failed', outcome: { kind: 'network', message: 'the upload was created without a Location' }, sent: true });
        // Kept before anything else is sent: from now on this upload is resumed, never made again.
        await save({ ...state, url: new URL(location, endpoint).toString(), bytesKey: undefined });
        // A repeat of a creation whose answer was lost: the upload may hold bytes already; ask where it stands.
        if (response.headers.get('idempotent-replayed') === 'true') throw new Stop({ kind: 'restart', sent: true, progressed: false });
        return;
      }
      // The small first PATCH of a resume was taken: go on with full ones (from a fresh HEAD).
      if (method === 'PATCH' && response.ok && probing) throw new Stop({ kind: 'restart', sent: true, progressed: true, probed: true });
      const outcome = classify(response.status, response.headers, await response.text().catch(() => ''));
      if (outcome.kind === 'ok') return;
      if (method === 'PATCH' && gone(outcome) && outcome.code === 'resource_missing' && (outcome.error?.param === 'conversation_id' || outcome.error?.param === 'message_id')) {
        // The completion's answer: the upload's conversation (or message) is gone. Final, as POST
        // /v1/files's 404 is; a new upload would be refused the same way.
        throw new Stop({ kind: 'failed', outcome, sent: true });
      }
      if (method !== 'POST' && gone(outcome)) {
        // The server no longer knows this upload (expired, removed): a new one from the queued
        // bytes, under a new creation key (the old key would give back the old upload).
        await save({ url: null, generation: state.generation + 1 });
        throw new Stop({ kind: 'restart', sent: flags.sent, progressed: flags.progressed });
      }
      if (method === 'PATCH' && outcome.kind === 'refused' && outcome.code === 'upload_offset_mismatch') {
        throw new Stop({ kind: 'restart', sent: flags.sent, progressed: flags.progressed });
      }
      throw new Stop({ kind: 'failed', outcome, sent: flags.sent || method !== 'HEAD' });
    });
    stack.beforeSend = (request) => {
      const method = request.getMethod();
      if (method === 'POST') {
        request.setHeader('Idempotency-Key', creationKey(key, state));
        // Its bytes may reach the server (and make the file) even if no answer comes back.
        if (withBytes) flags.sent = true;
      }
      // The request that stores the last byte answers with the file itself: no GET after it.
      if (method === 'POST' || method === 'PATCH') request.setHeader('Prefer', 'return=representation');
    };
    const metadata: Record<string, string> = { filename: body.filename, filetype: body.fileType };
    if (body.messageId) metadata.message_id = body.messageId;
    else metadata.conversation_id = body.conversationId;
    const upload = new Upload(source as unknown as Blob, {
      endpoint,
      uploadUrl: state.url,
      metadata,
      uploadSize: body.size,
      chunkSize,
      uploadDataDuringCreation: withBytes,
      retryDelays: null, // retries are the engine's (backoff, classification); restarts are ours
      storeFingerprintForResuming: false, // the URL lives in the operation
      removeFingerprintOnSuccess: false,
      fingerprint: async () => null as unknown as string,
      fileReader: source.reader,
      httpStack: stack,
      onProgress: (sent, total) => onProgress(sent, total, Math.max(0, flags.offset)),
      onSuccess: ({ lastResponse }) => {
        // Completion always carries Upload-File-Id (caught above); a success without it is not ours to trust.
        const fileId = lastResponse.getHeader('Upload-File-Id');
        resolve(
          fileId
            ? { kind: 'done', fileId, sent: flags.sent }
            : { kind: 'failed', outcome: { kind: 'network', message: 'the upload completed without a file id' }, sent: flags.sent },
        );
      },
      onError: (error) => {
        const cause = (error as { causingError?: unknown }).causingError ?? error;
        if (cause instanceof Stop) return resolve(cause.run);
        if (cause instanceof Cancelled) return resolve({ kind: 'cancelled', sent: flags.sent });
        const message = messageOf(cause);
        resolve({
          kind: 'failed',
          outcome: { kind: 'network', message, unreachable: deps.isOffline?.() === true },
          sent: flags.sent,
        });
      },
    });
    // The user's cancel (intents/cancel-upload.ts) changes the outbox row, in another context (the
    // page): looked for while the transfer runs, and the transfer aborted at once when seen — once
    // the upload's URL is known. A creation is never aborted: its answer is the only thing that
    // names the upload (and, with the bytes, the file it made); lost, the cancellation would have
    // to create it again to find it (tus-requests.ts `locateUpload`), or leave it on the server.
    // So a cancel seen while the creation is out waits for its answer (bounded by the stall time);
    // its URL is kept then, and no PATCH follows (the queued bytes are gone: `Cancelled`).
    let looking = false;
    watch = setInterval(() => {
      if (looking || settled) return;
      looking = true;
      isCancelled()
        .then((yes) => {
          if (!yes || settled || state.url === null) return;
          resolve({ kind: 'cancelled', sent: flags.sent });
          void upload.abort(false).catch(() => {});
        })
        .catch(() => {})
        .finally(() => (looking = false));
    }, deps.cancelPollMs ?? CANCEL_POLL_MS);
    upload.start();
  });
}

/**
 * The file a completion's answer carries (asked with Prefer: return=representation; a server
 * that does not do it answers without a body): the client then reads it with a GET.
 */
async function representation(response: Response, fileId: string): Promise<FileObjectT | undefined> {
  if (!(response.headers.get('content-type') ?? '').includes('json')) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(await response.text());
  } catch {
    return undefined;
  }
  const parsed = FileObject.safeParse(json);
  return parsed.success && parsed.data.id === fileId ? parsed.data : undefined;
}

// ---- The HTTP stack: the engine's fetch (and the worker's XMLHttpRequest for PATCH progress),
// with the bearer token, the stall timeout, and a look at every answer before tus-js-client. ----

type Inspect = (request: HttpRequest, response: Response) => Promise<void>;

class WorkerHttpStack implements HttpStack {
  beforeSend: (request: HttpRequest) => void = () => {};
  constructor(
    private readonly deps: TusDeps,
    private readonly inspect: Inspect,
  ) {}

  createRequest(method: string, url: string): HttpRequest {
    return new WorkerRequest(this, method, url);
  }

  getName(): string {
    return 'ParleyWorkerHttpStack';
  }

  async send(request: WorkerRequest, body: Blob | null): Promise<HttpResponse> {
    const { deps } = this;
    this.beforeSend(request);
    const token = await deps.getToken();
    if (!token) throw new Stop({ kind: 'failed', outcome: { kind: 'unauthenticated', message: 'not signed in' }, sent: false });
    const headers: Record<string, string> = { ...request.headers, Authorization: `Bearer ${token}` };
    const response = await withStall(
      deps.stallMs ?? STALL_MS,
      (controller, moved) => {
        request.controller = controller;
        const init: RequestInit = { method: request.method, headers, body: body ?? undefined, signal: controller.signal };
        if (body && deps.upload) {
          return deps.upload(request.url, init, (sent) => {
            moved();
            request.progress(sent);
          });
        }
        return deps.fetch(request.url, init);
      },
    );
    await deps.onResponse?.(response.headers);
    await this.inspect(request, response);
    return new WorkerResponse(response.status, response.headers, response.bodyUsed ? '' : await response.text().catch(() => ''));
  }
}

class WorkerRequest implements HttpRequest {
  readonly headers: Record<string, string> = {};
  controller: AbortController | null = null;
  aborted = false;
  private onProgress: (sent: number) => void = () => {};

  constructor(
    private readonly stack: WorkerHttpStack,
    readonly method: string,
    readonly url: string,
  ) {}

  getMethod() {
    return this.method;
  }
  getURL() {
    return this.url;
  }
  setHeader(name: string, value: string) {
    this.headers[name] = value;
  }
  getHeader(name: string) {
    return this.headers[name];
  }
  setProgressHandler(handler: (sent: number) => void) {
    this.onProgress = handler;
  }
  progress(sent: number) {
    this.onProgress(sent);
  }
  send(body: unknown): Promise<HttpResponse> {
    return this.stack.send(this, (body as Blob | null | undefined) ?? null);
  }
  async abort() {
    this.aborted = true;
    this.controller?.abort(new DOMException('upload aborted', 'AbortError'));
  }
  getUnderlyingObject() {
    return null;
  }
}

class WorkerResponse implements HttpResponse {
  constructor(
    private readonly status: number,
    private readonly headers: Headers,
    private readonly body: string,
  ) {}
  getStatus() {
    return this.status;
  }
  getHeader(name: string) {
    return this.headers.get(name) ?? undefined;
  }
  getBody() {
    return this.body;
  }
  getUnderlyingObject() {
    return null;
  }
}

/**
 * Runs a request that is abandoned when nothing has moved for `stallMs`: no answer and no
 * progress (`moved()`, called on every progress event). No limit on a transfer that moves.
 */
async function withStall<T>(
  stallMs: number,
  send: (controller: AbortController, moved: () => void) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`no progress for ${Math.round(stallMs / 1000)} s: the transfer stalled`)), stallMs);
  };
  arm();
  try {
    return await send(controller, arm);
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason instanceof Error) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

// ---- The queued bytes, read from IndexedDB only as far as a slice needs. ----

interface IdbSource extends FileSource {
  reader: TusFileReader;
}

async function openSource(db: ParleyDb, opId: string, size: number, chunkCount: number): Promise<IdbSource | null> {
  const stored = await openStoredChunks(db, opId, size, chunkCount);
  if (!stored) return null;
  const { chunkBytes } = stored;
  const source: IdbSource = {
    size,
    async slice(start: number, end: number) {
      end = Math.min(end, size);
      if (end <= start) return { value: new Blob([]), done: end >= size };
      const chunks = await stored.read(Math.floor(start / chunkBytes), Math.floor((end - 1) / chunkBytes));
      // Fewer than asked for: the user cancelled and the bytes were dropped. Never send a short body.
      if (!chunks) throw new Cancelled();
      const parts: Uint8Array[] = [];
      for (const chunk of chunks) {
        const base = chunk.index * chunkBytes;
        const lo = Math.max(0, start - base);
        const hi = Math.min(chunk.bytes.byteLength, end - base);
        if (hi > lo) parts.push(new Uint8Array(chunk.bytes, lo, hi - lo));
      }
      return { value: new Blob(parts as BlobPart[]), done: end >= size };
    },
    close() {},
    reader: { openFile: async () => source },
  };
  return source;
}

function urlOf(baseUrl: string, path: string): string {
  return new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

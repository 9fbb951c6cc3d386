// The bytes of a file to show: a queued upload's from IndexedDB (they stay there until sent, so a
// photo just taken opens with no network), any other through fetch — which, on a device without a
// lock, the service worker answers from the device when it has the file (opened before, or kept
// offline) and otherwise fetches and keeps, so a file opened once opens offline the next time.
// On a device with a lock (this realm holds the keys) the service worker keeps nothing: the file is
// read from the sealed database first, and one fetched is kept there (lib/offline/device-files.ts).
import { keepOpenedFile, noteDeviceFileOpened, readDeviceFile } from '../../offline/device-files';
import { currentSealer, type FileView, type ParleyDb } from '../../sync/page';

export type Loaded = { ok: true; bytes: Uint8Array; from: 'queue' | 'device' | 'network' } | { ok: false; reason: 'offline' | 'gone' | 'failed'; message: string };

/** Headers of the response kept with a file kept on the device (as the downloader keeps them). */
const KEPT_HEADERS = ['content-type', 'content-disposition'];

async function queued(db: ParleyDb, fileId: string): Promise<Uint8Array | null> {
  const op = await db.outbox.where('entityId').equals(fileId).filter((o) => o.body.kind === 'file.upload').first();
  if (!op) return null;
  const chunks = await db.uploadChunks.where('opId').equals(op.id).sortBy('index');
  if (chunks.length === 0) return null;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.bytes.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(new Uint8Array(c.bytes), at);
    at += c.bytes.byteLength;
  }
  return out;
}

export async function loadFileBytes(db: ParleyDb, file: FileView, fetcher: typeof fetch = fetch): Promise<Loaded> {
  // An upload not yet on the server (or one whose bytes are still queued): read them here.
  const local = await queued(db, file.id);
  if (local) return { ok: true, bytes: local, from: 'queue' };
  if (!file.file_url) return { ok: false, reason: 'gone', message: 'The bytes of this upload are no longer on this device, and the server does not have it yet.' };
  const sealed = currentSealer() !== null;
  if (sealed) {
    const held = await readDeviceFile(db, file).catch(() => null);
    if (held) {
      await noteDeviceFileOpened(db, file.id, Date.now()).catch(() => {});
      return { ok: true, bytes: held.bytes, from: 'device' };
    }
  }
  let response: Response;
  try {
    response = await fetcher(file.file_url);
  } catch {
    return { ok: false, reason: 'offline', message: 'This file is not on this device and there is no network. Files open offline once they have been opened, or when their conversation is kept offline.' };
  }
  if (response.status === 404) return { ok: false, reason: 'gone', message: 'The server no longer has this file (it may have been deleted or renamed; the list updates with the next sync).' };
  if (!response.ok) return { ok: false, reason: 'failed', message: `The server could not send this file (HTTP ${response.status}). Try again later.` };
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (sealed && response.status === 200) {
    const headers = KEPT_HEADERS.flatMap((name) => {
      const value = response.headers.get(name);
      return value === null ? [] : [[name, value] as [string, string]];
    });
    // Kept for offline, while the file is shown: a failure to keep (a full disk, the device
    // locking) does not stop the showing.
    void keepOpenedFile(db, file, bytes, headers, Date.now()).catch(() => {});
  }
  return { ok: true, bytes, from: 'network' };
}

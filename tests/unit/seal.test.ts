// @vitest-environment node
// Encryption at rest (lib/sync/mirror/seal.ts): with the device's keys every row of the user's
// database is sealed on its way to IndexedDB and opened on its way back, so nothing IndexedDB
// holds names or describes a patient; the indexes that would (contact/group id, search words)
// hold keyed tokens, and the screens' queries on them still find what they found before.
import { Dexie } from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseExists, openSyncDb, type ConversationView, type FileView, type ParleyDb } from '../../lib/sync/mirror/db';
import { MirrorLockedError, requireSealing, setSealer } from '../../lib/sync/mirror/seal';
import { moveCachedFilesToDevice, readDeviceFile } from '../../lib/offline/device-files';
import { sealClearRows } from '../../lib/sync/mirror/seal-existing';
import { createSealer, deriveMirrorKeys } from '../../lib/sync/mirror/sealer';
import { chunkBytes, prepareChunks, readChunks, storeChunks } from '../../lib/sync/outbox/chunks';
import type { OutboxOp } from '../../lib/sync/outbox/operations';
import { removeDatabase } from '../../lib/sync/session/removal';
import { DEFAULT_FILTERS } from '../../lib/view/conversations';
import { readConversationWindow } from '../../lib/view/windows';

const PATIENT = 'amelia-hughes-NHS4857773456';
const FILE_NAME = 'ecg-lead-II-strip.png';
const BYTES_MARK = 'POTASSIUM 5.9 mmol/L HIGH';

const sealer = async (seed = 7) => createSealer(await deriveMirrorKeys(new Uint8Array(32).fill(seed)));

function conversation(id: string, contact: string | null, group: string | null = null): ConversationView {
  return { id, contact_id: contact, group_id: group, pinned_message_id: null, is_pinned: false, is_muted: false, last_active_at: 100, last_opened_at: null, created_at: 50, archived_at: null, syncState: 'synced' };
}

const file: FileView = { id: 'F000000000000001', message_id: 'M000000000000001', filename: FILE_NAME, file_url: 'http://h/files/F1?sig=x', file_type: 'image/png', file_size: 25, created_at: 60, conversationId: 'C000000000000001', syncState: 'synced' };

async function fill(db: ParleyDb) {
  await db.conversations.bulkPut([conversation('C000000000000001', PATIENT), conversation('C000000000000002', null, 'ward7B-night'), conversation('C000000000000003', 'oliver-smith')]);
  await db.files.put(file);
  await db.outbox.add({ id: 'op-1', entity: 'file', entityId: file.id, body: { kind: 'file.rename', filename: `${FILE_NAME}.old` }, state: 'queued' } as unknown as OutboxOp);
  // As an upload is queued: the bytes prepared (sealed with WebCrypto when there are keys) before the transaction.
  const chunks = await prepareChunks(new TextEncoder().encode(BYTES_MARK).buffer as ArrayBuffer);
  await db.transaction('rw', db.uploadChunks, () => storeChunks(db, 'op-1', chunks));
  await db.meta.put({ key: 'lastSearch', value: PATIENT });
}

/** Everything IndexedDB holds for the database, read past Dexie's middleware, as text (bytes as Latin-1). */
async function rawText(name: string, dexie: { indexedDB: IDBFactory; IDBKeyRange: typeof IDBKeyRange }): Promise<string> {
  const raw = new Dexie(name, { ...dexie, addons: [] });
  await raw.open();
  const parts: string[] = [];
  const text = (value: unknown): string =>
    value instanceof Uint8Array || value instanceof ArrayBuffer
      ? new TextDecoder('latin1').decode(new Uint8Array(value as ArrayBuffer))
      : value && typeof value === 'object'
        ? Object.entries(value).map(([k, v]) => `${k}:${text(v)}`).join(',')
        : String(value);
  for (const table of raw.tables) for (const row of await table.toArray()) parts.push(text(row));
  raw.close();
  return parts.join('\n');
}

const env = () => ({ indexedDB: new IDBFactory(), IDBKeyRange });

afterEach(() => {
  setSealer(null);
  requireSealing(false);
});

describe('the sealed mirror', () => {
  it('holds nothing that names a patient, and reads back exactly what was written', async () => {
    const dexie = env();
    setSealer(await sealer());
    const db = openSyncDb('parley-sync-sealed', dexie);
    await fill(db);
    const raw = await rawText('parley-sync-sealed', dexie);
    for (const secret of [PATIENT, 'amelia', 'hughes', 'ward7B', 'oliver', FILE_NAME, 'ecg', BYTES_MARK, 'POTASSIUM', 'file.rename']) expect(raw).not.toContain(secret);
    // … while what was written comes back whole (the outbox's seq given by IndexedDB included).
    expect(await db.conversations.get('C000000000000001')).toEqual(conversation('C000000000000001', PATIENT));
    expect(await db.files.get(file.id)).toEqual(file);
    expect(await db.outbox.toArray()).toEqual([expect.objectContaining({ seq: 1, id: 'op-1', body: { kind: 'file.rename', filename: `${FILE_NAME}.old` } })]);
    expect((await readChunks(db, 'op-1', 1))!.map((bytes) => new TextDecoder().decode(bytes))).toEqual([BYTES_MARK]);
    expect(await db.meta.get('lastSearch')).toEqual({ key: 'lastSearch', value: PATIENT });
    db.close();
  });

  it('finds a conversation by its contact or group id, and by the words typed into the search', async () => {
    const dexie = env();
    setSealer(await sealer());
    const db = openSyncDb('parley-sync-search', dexie);
    await fill(db);
    expect((await db.conversations.where('contact_id').equals(PATIENT).first())?.id).toBe('C000000000000001');
    expect((await db.conversations.where('group_id').equals('ward7B-night').first())?.id).toBe('C000000000000002');
    expect(await db.conversations.where('contact_id').equals('amelia').first()).toBeUndefined();
    const search = async (text: string) => (await readConversationWindow(db, { ...DEFAULT_FILTERS, text }, null, 0, 50)).rows.map((c) => c.id);
    expect(await search('hughes amel')).toEqual(['C000000000000001']);
    expect(await search('a')).toEqual(['C000000000000001']);
    expect(await search('ward 7b')).toEqual(['C000000000000002']);
    expect(await search('ol')).toEqual(['C000000000000003']);
    expect(await search('oliverx')).toEqual([]);
    expect(await search('4857773456')).toEqual(['C000000000000001']);
    // The list's default order is an index in clear: it reads only the window.
    expect((await readConversationWindow(db, DEFAULT_FILTERS, null, 0, 2)).indexed).toBe(true);
    db.close();
  });

  it('refuses to open a sealed row without the keys, and to write in clear while a lock is required', async () => {
    const dexie = env();
    setSealer(await sealer());
    const db = openSyncDb('parley-sync-locked', dexie);
    await fill(db);
    // A file opened on this device: its bytes are held in the database, sealed.
    await db.offlineFiles.put({ fileId: file.id, conversationId: file.conversationId!, url: file.file_url!, size: 25, received: 25, complete: true, lastOpenedAt: 70, etag: null, headers: [] });
    setSealer(null);
    await expect(db.conversations.get('C000000000000001')).rejects.toBeInstanceOf(MirrorLockedError);
    await expect(db.files.toArray()).rejects.toBeInstanceOf(MirrorLockedError);
    // Counting and keys need no key: erasing a locked device can say what it erased.
    expect(await db.outbox.count()).toBe(1);
    requireSealing(true);
    await expect(db.files.put({ ...file, id: 'F000000000000002' })).rejects.toBeInstanceOf(MirrorLockedError);
    requireSealing(false);
    expect(await rawText('parley-sync-locked', dexie)).not.toContain('F000000000000002');
    db.close();
    // Ten wrong PINs or a remote wipe erase a locked device: without its keys, all the same.
    expect(await removeDatabase('parley-sync-locked', dexie)).toMatchObject({ databases: 1, conversations: 3, files: 1, unsyncedChanges: 1, openedDocuments: 1 });
    expect(await databaseExists('parley-sync-locked', dexie)).toBe(false);
  });

  it("seals a queued upload's bytes with WebCrypto before their transaction, beside the row's seal, and opens them only with the keys", async () => {
    const dexie = env();
    setSealer(await sealer());
    const db = openSyncDb('parley-sync-bytes', dexie);
    const plain = new TextEncoder().encode(`${BYTES_MARK} `.repeat(60_000)).buffer as ArrayBuffer; // 1.5 MB: two chunks
    const chunks = await prepareChunks(plain);
    expect(chunks.map((c) => c.byteLength)).toEqual([1024 * 1024, plain.byteLength - 1024 * 1024]);
    await db.transaction('rw', db.uploadChunks, () => storeChunks(db, 'op-9', chunks));
    const raw = new Dexie('parley-sync-bytes', { ...dexie, addons: [] });
    await raw.open();
    const stored = (await raw.table('uploadChunks').get(['op-9', 1])) as { $: Uint8Array; $b: { bytes: ArrayBuffer } };
    // Outside the row's own seal: the row's cipher does not pass over the bytes again.
    expect(stored.$.byteLength).toBeLessThan(200);
    expect(stored.$b.bytes.byteLength).toBe(plain.byteLength - 1024 * 1024 + 28);
    expect(await rawText('parley-sync-bytes', dexie)).not.toContain(BYTES_MARK);
    const back = await readChunks(db, 'op-9', 2);
    expect(new TextDecoder().decode(new Uint8Array(await new Blob(back!).arrayBuffer()))).toBe(new TextDecoder().decode(plain));
    // Changed on disk: refused, not read as other bytes.
    new Uint8Array(stored.$b.bytes)[100] ^= 1;
    await raw.table('uploadChunks').put(stored);
    raw.close();
    await expect(readChunks(db, 'op-9', 2)).rejects.toThrow();
    // Locked: nothing is sealed or opened, and nothing is written in clear.
    setSealer(null);
    requireSealing(true);
    await expect(prepareChunks(plain)).rejects.toBeInstanceOf(MirrorLockedError);
    await expect(readChunks(db, 'op-9', 2)).rejects.toBeInstanceOf(MirrorLockedError);
    requireSealing(false);
    db.close();
  });

  it('does not open rows sealed under another key or changed on disk', async () => {
    const dexie = env();
    setSealer(await sealer(1));
    const db = openSyncDb('parley-sync-tamper', dexie);
    await db.files.put(file);
    setSealer(await sealer(2));
    await expect(db.files.get(file.id)).rejects.toThrow();
    setSealer(await sealer(1));
    const raw = new Dexie('parley-sync-tamper', { ...dexie, addons: [] });
    await raw.open();
    const stored = (await raw.table('files').get(file.id)) as { $: Uint8Array };
    stored.$[40] ^= 1;
    await raw.table('files').put(stored);
    raw.close();
    await expect(db.files.get(file.id)).rejects.toThrow();
    db.close();
  });

  it('reads rows written in clear before the lock existed, and seals them when they are written again', async () => {
    const dexie = env();
    const db = openSyncDb('parley-sync-before', dexie);
    await db.files.put(file);
    setSealer(await sealer());
    expect(await db.files.get(file.id)).toEqual(file);
    await db.files.put(await db.files.get(file.id) as FileView);
    expect(await rawText('parley-sync-before', dexie)).not.toContain(FILE_NAME);
    db.close();
    // Without a lock, kept files are counted where their bytes are (the service worker's cache), not by their rows.
    setSealer(null);
    requireSealing(false);
    const clear = openSyncDb('parley-sync-clear', dexie);
    await clear.offlineFiles.put({ fileId: file.id, conversationId: file.conversationId!, url: file.file_url!, size: 25, received: 25, complete: true, lastOpenedAt: 70, etag: null, headers: [] });
    await clear.files.put(file);
    clear.close();
    expect(await removeDatabase('parley-sync-clear', dexie)).toMatchObject({ databases: 1, files: 1, openedDocuments: 0 });
  });

  it('seals every row kept in clear from before the lock once the keys exist, so the tokens find them too', async () => {
    const dexie = env();
    const db = openSyncDb('parley-sync-migrate', dexie);
    await fill(db);
    // More than a page of queued chunks: the pass goes page by page.
    await db.uploadChunks.bulkAdd(Array.from({ length: 70 }, (_, i) => ({ opId: 'op-1', index: i + 1, bytes: new TextEncoder().encode(`${BYTES_MARK} ${i}`).buffer as ArrayBuffer })));
    expect(await rawText('parley-sync-migrate', dexie)).toContain(PATIENT);
    await expect(sealClearRows(db, dexie)).rejects.toBeInstanceOf(MirrorLockedError);
    setSealer(await sealer());
    // Before the pass, the clear row's index holds the id itself: the token finds nothing.
    expect(await db.conversations.where('contact_id').equals(PATIENT).first()).toBeUndefined();
    expect(await sealClearRows(db, dexie)).toBe(3 + 1 + 1 + 71 + 1);
    const raw = await rawText('parley-sync-migrate', dexie);
    for (const secret of [PATIENT, 'amelia', 'ward7B', FILE_NAME, BYTES_MARK, 'file.rename']) expect(raw).not.toContain(secret);
    expect((await db.conversations.where('contact_id').equals(PATIENT).first())?.id).toBe('C000000000000001');
    expect((await readConversationWindow(db, { ...DEFAULT_FILTERS, text: 'hughes' }, null, 0, 50)).rows.map((c) => c.id)).toEqual(['C000000000000001']);
    expect(await db.outbox.toArray()).toEqual([expect.objectContaining({ seq: 1, id: 'op-1' })]);
    expect(await db.uploadChunks.count()).toBe(71);
    expect(new TextDecoder().decode(await chunkBytes((await db.uploadChunks.get(['op-1', 70]))!.bytes))).toBe(`${BYTES_MARK} 69`);
    // A second pass finds nothing left.
    expect(await sealClearRows(db, dexie)).toBe(0);
    db.close();
  });

  it('files opened before the lock move from the opened-files cache into sealed chunks, and open from them', async () => {
    const dexie = env();
    const db = openSyncDb('parley-sync-cached', dexie);
    await fill(db);
    // As the service worker left it without a lock: the row says complete, the bytes are in the cache.
    const content = `${BYTES_MARK} `.repeat(40_000); // more than one chunk
    await db.offlineFiles.put({ fileId: file.id, conversationId: file.conversationId, url: file.file_url!, size: content.length, received: content.length, complete: true, lastOpenedAt: 1234, etag: null, headers: [] });
    await db.offlineFiles.put({ fileId: 'F000000000000002', conversationId: file.conversationId, url: 'http://h/files/F2?sig=y', size: 3, received: 3, complete: true, lastOpenedAt: null, etag: null, headers: [] });
    const cache = new Map<string, Response>([[file.file_url!, new Response(content, { headers: { 'content-type': 'image/png', 'content-disposition': `inline; filename="${FILE_NAME}"`, etag: '"x"' } })]]);
    const storage = {
      has: async (name: string) => name === 'parley-files',
      open: async () => ({ match: async (url: string) => cache.get(url)?.clone() }),
    } as unknown as CacheStorage;
    setSealer(await sealer());
    await sealClearRows(db, dexie);
    expect(await readDeviceFile(db, file)).toBeNull(); // no chunks yet: it would not open
    expect(await moveCachedFilesToDevice(db, storage, 'parley-files')).toBe(1);
    const held = await readDeviceFile(db, file);
    expect(new TextDecoder().decode(held!.bytes)).toBe(content);
    expect(held!.row).toMatchObject({ lastOpenedAt: 1234, complete: true, headers: [['content-type', 'image/png'], ['content-disposition', `inline; filename="${FILE_NAME}"`]] });
    // The one the cache does not hold stays as it was (the downloader's reconcile fetches it again).
    expect(await db.offlineFiles.get('F000000000000002')).toMatchObject({ complete: true, size: 3 });
    const raw = await rawText('parley-sync-cached', dexie);
    for (const secret of [BYTES_MARK, FILE_NAME]) expect(raw).not.toContain(secret);
    db.close();
  });
});

// The files list's windowed reads (windows.ts says how): newest first through an index, overall or
// per conversation; filters (name, kind, on this device) and column sorts in memory. A module of
// its own: only the Files screen, loaded on first use, reads it.
import { heldFileIds, onDeviceFileIds } from '../offline/on-device';
import type { FileView, ParleyDb } from '../sync/page';
import { conversationTitle, type ListSort } from './conversations';
import { typeFamily } from './format';
import type { ListWindow } from './windows';

export type FileFamily = 'any' | ReturnType<typeof typeFamily>;
export interface FileFilters {
  /** '' = every conversation. */
  conversationId: string;
  family: FileFamily;
  name: string;
  /** Only files whose bytes the device holds (they open with no network). */
  onDevice?: boolean;
}
export type FileSortColumn = 'name' | 'conversation' | 'type' | 'size' | 'date';
/** `onDevice`: the device holds the file's bytes (lib/offline/on-device.ts). */
export type FileRow = FileView & { conversationTitle: string; onDevice: boolean };

function fileSortValue(f: FileRow, column: FileSortColumn): string | number {
  switch (column) {
    case 'name':
      return f.filename.toLowerCase();
    case 'conversation':
      return f.conversationTitle.toLowerCase();
    case 'type':
      return f.file_type;
    case 'size':
      return f.file_size;
    case 'date':
      return f.created_at;
  }
}

async function withTitles(db: ParleyDb, files: FileView[]): Promise<FileRow[]> {
  const ids = [...new Set(files.map((f) => f.conversationId).filter((id): id is string => id !== null))];
  const conversations = await db.conversations.bulkGet(ids);
  const titles = new Map(ids.map((id, i) => [id, conversations[i] ? conversationTitle(conversations[i]) : '']));
  const held = await onDeviceFileIds(db, files);
  return files.map((f) => ({ ...f, conversationTitle: f.conversationId ? (titles.get(f.conversationId) ?? '') : '', onDevice: held.has(f.id) }));
}

export async function readFileWindow(
  db: ParleyDb,
  filters: FileFilters,
  sort: ListSort<FileSortColumn>,
  start: number,
  limit: number,
): Promise<ListWindow<FileRow>> {
  return db.transaction('r', db.files, db.conversations, db.offlineFiles, async () => {
    const needle = filters.name.trim().toLowerCase();
    if (!sort && filters.family === 'any' && needle === '' && !filters.onDevice) {
      // Newest first: the created_at index backwards (per conversation: the compound one).
      const newestFirst = () =>
        filters.conversationId
          ? db.files.where('[conversationId+created_at]').between([filters.conversationId], [filters.conversationId, []], true, false).reverse()
          : db.files.orderBy('created_at').reverse();
      const total = await newestFirst().count();
      const rows = await newestFirst().offset(start).limit(limit).toArray();
      return { total, start, rows: await withTitles(db, rows), indexed: true };
    }
    // On the device only: the few rows held, not every file.
    const candidates = filters.onDevice
      ? await onDevice(db, filters.conversationId)
      : filters.conversationId
        ? await db.files.where('conversationId').equals(filters.conversationId).toArray()
        : await db.files.toArray();
    const matching = candidates
      .filter((f) => (filters.family === 'any' || typeFamily(f.file_type) === filters.family) && (!needle || f.filename.toLowerCase().includes(needle)))
      .sort((a, b) => b.created_at - a.created_at);
    let rows: FileRow[];
    if (sort) {
      const titled = await withTitles(db, matching);
      const sign = sort.desc ? -1 : 1;
      rows = titled
        .map((f, i) => ({ f, i, v: fileSortValue(f, sort.id) }))
        .sort((a, b) => (a.v < b.v ? -sign : a.v > b.v ? sign : a.i - b.i))
        .map((x) => x.f)
        .slice(start, start + limit);
    } else {
      rows = await withTitles(db, matching.slice(start, start + limit));
    }
    return { total: matching.length, start, rows, indexed: false };
  });
}

/** The files (of a conversation, or '' every one) whose bytes the device holds. */
async function onDevice(db: ParleyDb, conversationId: string): Promise<FileView[]> {
  const files = (await db.files.bulkGet(await heldFileIds(db))).filter((f): f is FileView => f !== undefined && (!conversationId || f.conversationId === conversationId));
  const held = await onDeviceFileIds(db, files);
  return files.filter((f) => held.has(f.id));
}

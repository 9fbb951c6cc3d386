// Which files' bytes the device holds whole, for the lists' "On this device" mark and filter: the
// `offlineFiles` rows, complete under the file's current URL, whichever store holds the bytes
// (file-bytes.ts) — a renamed file's old bytes are under its old URL, which no longer opens. A
// module of its own, with nothing but types imported: the files list reads it.
import type { FileView, ParleyDb } from '../sync/page';

/** Of the files given, the ids of those held whole on the device. */
export async function onDeviceFileIds(db: ParleyDb, files: ReadonlyArray<Pick<FileView, 'id' | 'file_url'>>): Promise<Set<string>> {
  const rows = await db.offlineFiles.bulkGet(files.map((f) => f.id));
  return new Set(files.filter((f, i) => f.file_url !== '' && rows[i]?.complete === true && rows[i]?.url === f.file_url).map((f) => f.id));
}

/** The ids of every file held whole on the device (for the filter: then checked against each file's URL). */
export async function heldFileIds(db: ParleyDb): Promise<string[]> {
  return (await db.offlineFiles.filter((r) => r.complete).toArray()).map((r) => r.fileId);
}

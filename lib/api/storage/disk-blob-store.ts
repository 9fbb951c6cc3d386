// File bytes on local disk: DATA_DIR/files/<first two characters of the key>/<key>. An upload is
// written under DATA_DIR/tmp/ (fsynced as it closes), then renamed into place and the directory
// fsynced, so the rename itself survives a power cut.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { newId } from '../ids';
import type { BlobStore, BlobWrite, ByteRange, StoredBlob } from './blob-store';

async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class DiskBlobStore implements BlobStore {
  readonly filesDir: string;
  readonly tmpDir: string;

  constructor(dataDir: string) {
    this.filesDir = path.join(dataDir, 'files');
    this.tmpDir = path.join(dataDir, 'tmp');
    fs.mkdirSync(this.filesDir, { recursive: true });
    fs.mkdirSync(this.tmpDir, { recursive: true });
  }

  pathOf(key: string): string {
    return path.join(this.filesDir, key.slice(0, 2), key);
  }

  begin(): BlobWrite {
    const key = newId(24);
    const tempPath = path.join(this.tmpDir, `${key}.part`);
    // flush: fsync before close, so the bytes are on disk before the rename can make them visible
    // (Node >= 20.10, see `engines`).
    const sink = fs.createWriteStream(tempPath, { flags: 'wx', flush: true, highWaterMark: 1024 * 1024 });
    const closed = new Promise<void>((resolve) => sink.once('close', () => resolve()));
    return {
      key,
      sink,
      finish: async () => {
        await closed;
        const target = this.pathOf(key);
        const shard = path.dirname(target);
        if (!fs.existsSync(shard)) {
          await fsp.mkdir(shard, { recursive: true });
          await fsyncDirectory(this.filesDir); // the new shard directory's own entry
        }
        await fsp.rename(tempPath, target);
        await fsyncDirectory(shard);
      },
      abort: async () => {
        // A sink destroyed while still opening its file opens it anyway before closing: wait for
        // its 'close', or the file would appear after the removal.
        if (!sink.closed) {
          sink.destroy();
          await closed;
        }
        // Both places: finish() may have failed after its rename (fsyncing the directory), and the
        // key is this write's alone.
        await Promise.all([
          fsp.rm(tempPath, { force: true }).catch(() => {}),
          fsp.rm(this.pathOf(key), { force: true }).catch(() => {}),
        ]);
      },
    };
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    const stream = fs.createReadStream(this.pathOf(key), { ...range, highWaterMark: 256 * 1024 });
    // Surface a missing file here rather than mid-response.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  async remove(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async *list(): AsyncIterable<StoredBlob> {
    for (const shard of await fsp.readdir(this.filesDir)) {
      const shardDir = path.join(this.filesDir, shard);
      for (const key of await fsp.readdir(shardDir)) {
        const stat = await fsp.stat(path.join(shardDir, key)).catch(() => null);
        if (stat) yield { key, modifiedAt: stat.mtimeMs };
      }
    }
  }

  /** Both directories are there and writable (as far as permissions go; a full disk shows on write). */
  async check(): Promise<void> {
    await Promise.all([fsp.access(this.filesDir, fs.constants.W_OK), fsp.access(this.tmpDir, fs.constants.W_OK)]);
  }

  async removeUnfinished(olderThanMs: number): Promise<number> {
    let removed = 0;
    const now = Date.now();
    for (const name of await fsp.readdir(this.tmpDir)) {
      const full = path.join(this.tmpDir, name);
      const stat = await fsp.stat(full).catch(() => null);
      if (!stat || now - stat.mtimeMs < olderThanMs) continue;
      await fsp.rm(full, { force: true, recursive: true });
      removed++;
    }
    return removed;
  }
}

// File bytes on local disk. An upload is written under tmp/, fsynced, then renamed into files/
// before its row commits; a crash in between leaves bytes without a row, which the start-up sweep
// removes. Nothing a user can see ever points at missing or partial bytes.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { newId } from './ids';

export class BlobStore {
  readonly filesDir: string;
  readonly tmpDir: string;

  constructor(dataDir: string) {
    this.filesDir = path.join(dataDir, 'files');
    this.tmpDir = path.join(dataDir, 'tmp');
    fs.mkdirSync(this.filesDir, { recursive: true });
    fs.mkdirSync(this.tmpDir, { recursive: true });
  }

  newKey(): string {
    return newId(24);
  }

  tempPath(): string {
    return path.join(this.tmpDir, `${newId(24)}.part`);
  }

  pathOf(key: string): string {
    return path.join(this.filesDir, key.slice(0, 2), key);
  }

  /** Moves fsynced temporary bytes into place under `key`, durably. */
  async commit(tempPath: string, key: string): Promise<void> {
    const target = this.pathOf(key);
    const dir = path.dirname(target);
    await fsp.mkdir(dir, { recursive: true });
    await fsp.rename(tempPath, target);
    const handle = await fsp.open(dir, 'r');
    try {
      await handle.sync(); // the rename itself survives a power cut
    } finally {
      await handle.close();
    }
  }

  async remove(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async removeTemp(tempPath: string): Promise<void> {
    await fsp.rm(tempPath, { force: true });
  }

  /** Deletes every temporary file and every stored blob whose key is not in `liveKeys`. */
  async sweep(isLive: (key: string) => boolean): Promise<{ temp: number; orphans: number }> {
    let temp = 0;
    let orphans = 0;
    for (const name of await fsp.readdir(this.tmpDir)) {
      await fsp.rm(path.join(this.tmpDir, name), { force: true, recursive: true });
      temp++;
    }
    for (const shard of await fsp.readdir(this.filesDir)) {
      const shardDir = path.join(this.filesDir, shard);
      for (const key of await fsp.readdir(shardDir)) {
        if (!isLive(key)) {
          await fsp.rm(path.join(shardDir, key), { force: true });
          orphans++;
        }
      }
    }
    return { temp, orphans };
  }
}

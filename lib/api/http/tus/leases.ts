// One PATCH at a time per upload: a lease in the upload's row (`writer`, `writer_until`), taken by
// a conditional update on the expected offset and renewed while bytes arrive; the offset moves
// only by an update that still holds the lease (storage/uploads.ts). A PATCH that finds the lease
// held by a request of this same process (typically one whose connection died unnoticed) ends
// that request first, as @tus/server's locker does; one held by another instance answers 409
// upload_in_progress with Retry-After (the lease lapses within LEASE_MS of that instance's death).
import { notFound } from '../../errors';
import { newId } from '../../ids';
import type { UploadRecords } from '../../storage/uploads';
import { inProgress, LEASE_MS, offsetMismatch } from './protocol';

const RENEW_MS = 10_000;
/** How long a PATCH waits for a request of this process that held the upload to let go. */
const TAKEOVER_WAIT_MS = 10_000;

export interface Lease {
  token: string;
  release(): Promise<void>;
}

/** A request of this process writing to an upload (a PATCH, or a HEAD making its file). */
export interface LocalWriter {
  /** Ends its body (a later PATCH of the same upload takes over, or the upload is gone). */
  cancel(): void;
  released: Promise<void>;
  /**
   * Settles once its body's chunk is recorded or its blob removed (at once when it stores no
   * bytes): what a termination waits for, so that no byte of the upload outlives it.
   */
  received: Promise<void>;
  /** Its body has ended (all of it, or cut short): what is left is recording its chunk. */
  bodyEnded(): boolean;
}

export class Leases {
  /** This process's writers, by upload id. */
  readonly writers = new Map<string, LocalWriter>();

  constructor(private readonly records: UploadRecords) {}

  /** Takes the upload's lease at `offset`, or says why not (409: another offset, or another writer). */
  async claim(id: string, offset: number): Promise<Lease> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const token = newId();
      const nowMs = Date.now();
      if (await this.records.claim(id, offset, token, nowMs, nowMs + LEASE_MS)) {
        return { token, release: () => this.records.release(id, token) };
      }
      const current = await this.records.find(id);
      if (!current) throw notFound('upload');
      if (current.file_id !== null) throw offsetMismatch(current.upload_length);
      if (current.upload_offset !== offset) throw offsetMismatch(current.upload_offset);
      // Held. By a request of this process (a connection that died unnoticed, or a client that
      // gave up on it): end that one, let it record what it received, and look again.
      const holder = this.writers.get(id);
      if (!holder || attempt > 0) throw inProgress(current.writer_until);
      holder.cancel();
      await Promise.race([holder.released, new Promise((resolve) => setTimeout(resolve, TAKEOVER_WAIT_MS).unref())]);
    }
    throw inProgress();
  }

  /** Renews `lease` on upload `id` every RENEW_MS until the returned stop is called. */
  keep(id: string, lease: Lease): () => void {
    const renew = setInterval(() => {
      void this.records.renew(id, lease.token, Date.now() + LEASE_MS).catch(() => {});
    }, RENEW_MS);
    renew.unref();
    return () => clearInterval(renew);
  }

  /** Notes `writer` as this process's writer of `id`; the returned function forgets it (if still the one). */
  hold(id: string, writer: LocalWriter): () => void {
    this.writers.set(id, writer);
    return () => {
      if (this.writers.get(id) === writer) this.writers.delete(id);
    };
  }
}

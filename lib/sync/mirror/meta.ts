// The meta table, typed: one row per key, and `MetaValues` says what each key holds. The module
// that owns a key declares it beside the type it stores, by augmenting `MetaValues`:
//
//   declare module '../mirror/meta' {
//     interface MetaValues { feed: FeedState }
//   }
//
// so getMeta/setMeta check key and value everywhere, and meta.ts imports nothing from its users
// (no import cycle). Facts about the server that are plain flags are declared here.
import type { ParleyDb } from './db';

export interface MetaValues {
  /** The server honours Idempotency-Key (learnt from an answer that says so). */
  serverIdempotency: boolean;
  /** The server refused last_opened_at as an unknown parameter (a brief-only server). */
  serverLacksLastOpened: boolean;
}

export type MetaKey = keyof MetaValues;

export async function getMeta<K extends MetaKey>(db: ParleyDb, key: K): Promise<MetaValues[K] | undefined> {
  const row = await db.meta.get(key);
  return row?.value as MetaValues[K] | undefined;
}

export async function setMeta<K extends MetaKey>(db: ParleyDb, key: K, value: MetaValues[K]): Promise<void> {
  await db.meta.put({ key, value });
}

export async function deleteMeta(db: ParleyDb, key: MetaKey): Promise<void> {
  await db.meta.delete(key);
}

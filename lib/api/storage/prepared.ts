// Queries built and compiled once, then executed with new parameter values: the hot paths do no
// query building per request, and (with the statement cache in db.ts) SQLite re-uses the statement.
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { FastReader } from './engine';

const fastReaders = new WeakMap<Kysely<any>, FastReader>();

/** Prepared queries run on the root database (not in a transaction) read through `reader`. */
export function registerFastReader(db: Kysely<any>, reader: FastReader): void {
  fastReaders.set(db, reader);
}

class Slot {
  constructor(readonly name: string) {}
}

export type SlotFn<A> = <K extends keyof A & string>(name: K) => A[K];

export interface Prepared<A, R> {
  (executor: Kysely<any>, args: A): Promise<R[]>;
}

/** `build` receives `slot(name)` placeholders; each call supplies the values by name. */
export function prepare<A extends Record<string, unknown>, R>(
  db: Kysely<any>,
  build: (slot: SlotFn<A>) => Compilable<R>,
): Prepared<A, R> {
  const compiled = build(((name: string) => new Slot(name)) as SlotFn<A>).compile();
  const slots = compiled.parameters.map((p) => (p instanceof Slot ? p.name : null));
  const isRead = compiled.query.kind === 'SelectQueryNode';
  return async (executor, args) => {
    const parameters = compiled.parameters.map((p, i) => (slots[i] === null ? p : args[slots[i]]));
    const reader = isRead && executor === db ? fastReaders.get(db) : undefined;
    if (reader) return reader.all(compiled.sql, parameters) as R[];
    const query: CompiledQuery<R> = { ...compiled, parameters };
    const result = await executor.executeQuery(query);
    return result.rows;
  };
}

/** Variants of one query (e.g. by filter combination), each compiled once on first use. */
export function prepareVariants<V, A extends Record<string, unknown>, R>(
  db: Kysely<any>,
  keyOf: (variant: V) => string,
  build: (variant: V, slot: SlotFn<A>) => Compilable<R>,
): (variant: V) => Prepared<A, R> {
  const cache = new Map<string, Prepared<A, R>>();
  return (variant) => {
    const key = keyOf(variant);
    let prepared = cache.get(key);
    if (!prepared) {
      prepared = prepare<A, R>(db, (slot) => build(variant, slot));
      cache.set(key, prepared);
    }
    return prepared;
  };
}

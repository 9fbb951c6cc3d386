// Errors the UI tells apart. Their own module, so the page can test `instanceof` without loading
// the client (and with it zod) before the first write.

/** Thrown for input the server would reject anyway, or for an id that is not in the mirror. */
export class SyncInputError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'SyncInputError';
  }
}

/**
 * A field of a thrown value, whatever it is (errors of fetch, Dexie and the DOM carry `name`,
 * `message`, `cause`, `inner`, `failures`): undefined when it is not an object or has no such field.
 */
export function errorField(thrown: unknown, key: string): unknown {
  return (typeof thrown === 'object' && thrown !== null) || typeof thrown === 'function' ? Reflect.get(thrown, key) : undefined;
}

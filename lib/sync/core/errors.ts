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

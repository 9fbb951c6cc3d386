// Values whose shape the code does not know (parsed JSON, thrown errors, a platform's objects),
// read without telling the compiler anything it cannot check: first that it is an object, then a
// field, as `unknown`, for the caller to narrow. The server and the app both use it: it imports
// nothing.

/** A non-null object (an array too), its fields read as unknown. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** `value[key]` when `value` is an object, else undefined. */
export function fieldOf(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** `value[key]` when it is a string, else undefined (an error's `code`, `name`, `message`). */
export function stringField(value: unknown, key: string): string | undefined {
  const field = fieldOf(value, key);
  return typeof field === 'string' ? field : undefined;
}

// The Background Sync tag of a database: the page registers it (connect.ts), the service worker
// reads the database's name back from it (background.ts). Its own file so that the page's bundle
// does not pull in the engine that background.ts brings.

/** The tag is this prefix and the database's name. */
export const SYNC_TAG_PREFIX = 'parley-outbox:';

export function syncTagFor(database: string): string {
  return `${SYNC_TAG_PREFIX}${database}`;
}

export function databaseOfTag(tag: string): string | null {
  return tag.startsWith(SYNC_TAG_PREFIX) ? tag.slice(SYNC_TAG_PREFIX.length) || null : null;
}

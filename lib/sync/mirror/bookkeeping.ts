// Which queued operations are the app's bookkeeping rather than the user's changes (issue 32 item
// 5): reporting that the user opened a conversation (the last_opened_at extension) is sent like
// any update, but it is not something the user did to their data. It goes quietly: no "unsynced"
// mark on the row (rebase.ts `reporting`), not counted as pending (engine/status.ts), and a refusal
// drops it instead of dead-lettering it (outbox/settle.ts). Pure; read below the outbox by the
// rebase and by the page's status.
import type { OpBody } from './bodies';

/** The fields an update may carry and still be bookkeeping. */
const BOOKKEEPING_FIELDS: ReadonlySet<string> = new Set(['last_opened_at']);

/**
 * True for a conversation update that carries only bookkeeping fields. A user's change merged with
 * it (consecutive unsent updates become one request) is the user's change again, and shows as one.
 */
export function isBookkeeping(body: OpBody): boolean {
  if (body.kind !== 'conversation.update') return false;
  const fields = Object.keys(body.patch);
  return fields.length > 0 && fields.every((field) => BOOKKEEPING_FIELDS.has(field));
}

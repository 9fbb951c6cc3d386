// The change feed's history, read for one fact only: which conversation each file is in. Every file
// event names it, and a file never moves, so the history — when the server still keeps it from its
// first event — places the files of a first listing without listing files per conversation (the
// scan). It is never the authority on what exists: the listing is (the feed may lack rows older
// than the extension, and a server that dropped events past its retention answers 410 to a cursor
// of 0, after which the scan does the work).
//
// Cost bound: a page of history (up to 1,000 events, each rendered with its object) costs the
// server roughly what ten per-conversation listings do, so reading stops once it has read more
// pages than the listings it could save are worth (`maxPages`, asked as it goes), or holds
// MAX_PLACEMENTS entries (memory), or has nothing left to place (`wanted`).
import * as z from 'zod/mini';
import { FEED_PAGE_LIMIT } from './feed';
import { call, type HttpDeps } from '../core/http';
import { runPipelined } from './pager';

export const MAX_PLACEMENTS = 500_000;

/**
 * Only what placement uses is checked: pages of history are large (objects of every kind) and are
 * parsed in the worker while it writes the listing, so the full event schema would cost the sync.
 */
const HistoryPage = z.object({
  data: z.array(z.object({ type: z.string(), object: z.object({ id: z.string() }), conversation_id: z.optional(z.string()) })),
  has_more: z.boolean(),
  next: z.string().check(z.minLength(1)),
});
type HistoryPage = z.infer<typeof HistoryPage>;

export interface HistoryOptions {
  /** Pages it may read so far (re-asked before each request). */
  maxPages: () => number;
  /** Whether a file still needs placing (default: every file). Checked as events arrive. */
  wanted?: (fileId: string) => boolean;
  /** Stop early once this returns true (e.g. nothing is left unplaced). */
  enough?: () => boolean;
  /** Called with each batch of placements found (file id → conversation id). */
  onPlacements?: (found: Map<string, string>) => Promise<void>;
}

export interface History {
  /** File id → conversation id, for the files history named. */
  placement: Map<string, string>;
  /** It read to the head of the feed (rather than stopping at a bound or on a failure). */
  complete: boolean;
}

export async function readHistory(deps: HttpDeps, options: HistoryOptions): Promise<History> {
  const placement = new Map<string, string>();
  let pages = 0;
  let complete = false;
  const request = (after: string) => () => {
    pages++;
    return call(deps, { method: 'GET', path: 'v1/events', query: { after, limit: FEED_PAGE_LIMIT } }, HistoryPage);
  };
  const failure = await runPipelined<HistoryPage>(
    request('0'),
    (page) => {
      if (!page.has_more || page.data.length === 0) {
        complete = true;
        return null;
      }
      const stop = pages >= options.maxPages() || placement.size >= MAX_PLACEMENTS || options.enough?.() === true;
      return stop ? null : request(page.next);
    },
    async (batch) => {
      const found = new Map<string, string>();
      for (const event of batch.flatMap((p) => p.data)) {
        if (event.type.startsWith('file.') && event.conversation_id && (options.wanted?.(event.object.id) ?? true)) {
          found.set(event.object.id, event.conversation_id);
        }
      }
      for (const [file, conversation] of found) placement.set(file, conversation);
      if (found.size > 0) await options.onPlacements?.(found);
    },
  );
  // A failure (410: no history from the start; a lost request) only ends the reading early.
  return { placement, complete: complete && !failure };
}

// Cursor pagination by keyset on the internal sequence (newest first). Never OFFSET: the last page
// costs what the first does.
import { Id, ListLimit } from '../../schemas';
import { ApiError, invalid, unknownParam } from '../errors';

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

export type CursorMode = 'first' | 'after' | 'before';

export interface ListParams {
  limit: number;
  mode: CursorMode;
  cursorId: string | null;
}

/**
 * Reads limit/starting_after/ending_before plus the endpoint's own filters from the query string.
 * Unknown or repeated parameters are 400, so a typo never silently returns everything.
 */
export function readListQuery(
  query: URLSearchParams,
  filterNames: readonly string[],
): { list: ListParams; filters: Record<string, string> } {
  const seen = new Set<string>();
  const filters: Record<string, string> = {};
  let limit = DEFAULT_LIMIT;
  let after: string | null = null;
  let before: string | null = null;
  for (const [name, value] of query) {
    if (seen.has(name)) throw invalid(name, `${name} was given more than once`);
    seen.add(name);
    if (name === 'limit') {
      if (!ListLimit.safeParse(value).success) {
        throw invalid('limit', `limit must be an integer from 1 to ${MAX_LIMIT}`);
      }
      limit = Number(value);
    } else if (name === 'starting_after') {
      after = value;
    } else if (name === 'ending_before') {
      before = value;
    } else if (filterNames.includes(name)) {
      filters[name] = value;
    } else {
      throw unknownParam(name);
    }
  }
  if (after !== null && before !== null) {
    throw invalid('starting_after', 'Use starting_after or ending_before, not both');
  }
  const cursorId = after ?? before;
  const cursorParam = after !== null ? 'starting_after' : 'ending_before';
  if (cursorId !== null && !Id.safeParse(cursorId).success) throw cursorNotInList(cursorParam, cursorId);
  return { list: { limit, mode: after !== null ? 'after' : before !== null ? 'before' : 'first', cursorId }, filters };
}

/**
 * Every endpoint other than a list takes no query parameters at all: each one is refused (400
 * parameter_unknown, named), on writes too — `PUT …?is_pinned=true` must not answer 200 and
 * change nothing.
 */
export function refuseQueryParameters(query: URLSearchParams): void {
  for (const name of query.keys()) throw unknownParam(name);
}

export const cursorNotInList = (param: string, id: string): ApiError =>
  invalid(param, `${param} must be the id of an item in this list; ${JSON.stringify(id)} is not`);

/**
 * One page: `seekCursor` finds the cursor's sequence number within the (filtered) list,
 * `fetch` returns up to `limit + 1` rows in the direction of travel.
 */
export async function paginate<Row>(
  params: ListParams,
  seekCursor: (id: string) => Promise<number | undefined>,
  fetch: (mode: CursorMode, cursorSeq: number, limit: number) => Promise<Row[]>,
): Promise<{ has_more: boolean; data: Row[] }> {
  let cursorSeq = 0;
  if (params.cursorId !== null) {
    const seq = await seekCursor(params.cursorId);
    if (seq === undefined) {
      throw cursorNotInList(params.mode === 'after' ? 'starting_after' : 'ending_before', params.cursorId);
    }
    cursorSeq = seq;
  }
  const rows = await fetch(params.mode, cursorSeq, params.limit + 1);
  const has_more = rows.length > params.limit;
  const page = has_more ? rows.slice(0, params.limit) : rows;
  // ending_before walks towards newer items (ascending); data is always in list order.
  if (params.mode === 'before') page.reverse();
  return { has_more, data: page };
}

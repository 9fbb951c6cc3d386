// `npm run audit`'s arguments and output (scripts/audit.ts runs them; tests import them).
import { type AuditQuery, type AuditRow } from './audit';
import { USER_PATTERN } from './tokens';
import { ID_PATTERN } from '../../schemas';

const OPTIONS = ['user', 'since', 'object'] as const;
const FLAGS = ['json'] as const;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Unix ms of --since, or null when it is not a date this command reads. */
export function parseSince(text: string): number | null {
  if (DATE.test(text)) {
    const ms = Date.parse(`${text}T00:00:00Z`);
    // 2026-02-31 must not quietly become 3 March.
    return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === text ? ms : null;
  }
  if (DATE_TIME.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isFinite(ms)) return null;
    const [, month, day] = /^\d{4}-(\d{2})-(\d{2})/.exec(text)!;
    return Number(month) >= 1 && Number(month) <= 12 && Number(day) >= 1 && Number(day) <= 31 ? ms : null;
  }
  return null;
}

/** The query and the output form, or what is wrong with the arguments (nothing is ignored). */
export function parseArguments(args: string[]): { query: AuditQuery; json: boolean } | string {
  const options = new Map<string, string>();
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) return `unexpected argument ${JSON.stringify(arg)}`;
    const name = arg.slice(2);
    if (FLAGS.some((flag) => flag === name)) {
      if (json) return `--${name} given twice`;
      json = true;
      continue;
    }
    if (!OPTIONS.some((option) => option === name)) return `unknown option ${JSON.stringify(arg)} (it takes ${[...OPTIONS, ...FLAGS].map((o) => `--${o}`).join(', ')})`;
    if (options.has(name)) return `--${name} given twice`;
    if (i + 1 >= args.length || args[i + 1].startsWith('--')) return `--${name} needs a value`;
    options.set(name, args[++i]);
  }
  const query: AuditQuery = {};
  const user = options.get('user');
  if (user !== undefined) {
    if (!USER_PATTERN.test(user)) return '--user must be 1-64 characters of A-Z a-z 0-9 _ . @ -';
    query.user = user;
  }
  const since = options.get('since');
  if (since !== undefined) {
    const ms = parseSince(since);
    if (ms === null) return `--since must be a date (YYYY-MM-DD) or an ISO time with its zone; got ${JSON.stringify(since)}`;
    query.since = ms;
  }
  const object = options.get('object');
  if (object !== undefined) {
    if (!ID_PATTERN.test(object)) return '--object must be an id: 16 characters of A-Z a-z 0-9';
    query.object = object;
  }
  return { query, json };
}

function objectText(row: AuditRow): string {
  let text = row.object_id !== null ? `${row.object_type} ${row.object_id}` : row.object_type ? `${row.object_type}s` : '-';
  if (row.conversation_id !== null) text += ` in conversation ${row.conversation_id}`;
  return text;
}

export function formatTable(rows: AuditRow[]): string {
  const header = ['TIME', 'USER', 'TOKEN', 'ACTION', 'OBJECT', 'ADDRESS', 'OUTCOME'];
  const lines = rows.map((r) => [new Date(r.at).toISOString(), r.user_id, r.token_id ?? '-', r.action, objectText(r), r.address ?? '-', r.outcome]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  return [header, ...lines].map((l) => l.map((cell, i) => (i === l.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

export function formatJson(row: AuditRow): string {
  return JSON.stringify({
    time: new Date(row.at).toISOString(),
    user: row.user_id,
    token: row.token_id,
    action: row.action,
    object_type: row.object_type,
    object_id: row.object_id,
    conversation_id: row.conversation_id,
    address: row.address,
    outcome: row.outcome,
  });
}

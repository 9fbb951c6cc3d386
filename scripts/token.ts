// npm run token -- create --user alice [--label phone] | list | revoke <id-or-token>
import fs from 'node:fs';
import path from 'node:path';
import { readConfig } from '../lib/config';
import { openDb } from '../lib/api/storage/db';
import { createToken, hashToken, labelProblem, listTokens, printableLabel, recordWipedToken, revokeToken } from '../lib/api/domain/tokens';
import { recordAudit } from '../lib/api/domain/audit';

const usage = `usage:
  npm run token -- create --user <user> [--label <text>]
  npm run token -- list
  npm run token -- revoke <token-id or token> [--wipe]

  --wipe: the token stops working and its device is told to erase everything of the user it
          holds (401 device_wiped), at once, without asking. Changes made on that device and not
          yet synced are lost. In proxy mode (UPSTREAM_BASE_URL) give the token itself: the
          proxy answers device_wiped for it; revoke it at the upstream too.`;

/** What each command takes: its options (`--name value`) and how many positional arguments. */
const COMMANDS = {
  create: { options: ['user', 'label'], positionals: 0 },
  list: { options: [], positionals: 0 },
  revoke: { options: [], flags: ['wipe'], positionals: 1 },
} as const satisfies Record<string, { options: readonly string[]; flags?: readonly string[]; positionals: number }>;
type Command = keyof typeof COMMANDS;

/**
 * A command's arguments, or what is wrong with them: an argument nobody reads (a stray word, an
 * unknown option) is refused, never ignored — `create --user alice bob` must not quietly make
 * alice's token, nor `revoke A B` revoke only A.
 */
function parseArguments(command: Command, args: string[]): { options: Map<string, string>; flags: Set<string>; positionals: string[] } | string {
  const spec: { options: readonly string[]; flags?: readonly string[]; positionals: number } = COMMANDS[command];
  const options = new Map<string, string>();
  const flags = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith('--')) {
      const name = arg.slice(2);
      if (spec.flags?.includes(name)) {
        if (flags.has(name)) return `${command}: --${name} given twice`;
        flags.add(name);
        continue;
      }
      if (!(spec.options as readonly string[]).includes(name)) {
        return `${command}: unknown option ${JSON.stringify(arg)}${spec.options.length ? ` (it takes ${spec.options.map((o) => `--${o}`).join(', ')})` : ' (it takes no options)'}`;
      }
      if (options.has(name)) return `${command}: --${name} given twice`;
      if (i + 1 >= args.length) return `${command}: --${name} needs a value`;
      options.set(name, args[++i]!);
    } else positionals.push(arg);
  }
  if (positionals.length > spec.positionals) {
    // A long one may be a token: not repeated whole.
    const stray = positionals.slice(spec.positionals).map((p) => JSON.stringify(p.length > 12 ? `${p.slice(0, 6)}…` : p)).join(' ');
    return `${command}: unexpected argument${positionals.length - spec.positionals > 1 ? 's' : ''} ${stray} (nothing was done)`;
  }
  if (positionals.length < spec.positionals) return `${command}: a token id or token is required`;
  return { options, flags, positionals };
}

/** Where the server keeps its SQLite database inside DATA_DIR (see lib/api/storage/db.ts). */
const SQLITE_FILE = 'parley.sqlite';

/** A connection string fit to print: the password masked. */
function printable(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.href;
  } catch {
    return '(an unreadable DATABASE_URL)';
  }
}

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command !== 'create' && command !== 'list' && command !== 'revoke') {
    console.error(usage);
    return 2;
  }
  // Refused before any database is opened or created.
  const parsed = parseArguments(command, rest);
  if (typeof parsed === 'string') {
    console.error(`[token] refused: ${parsed}\n${usage}`);
    return 2;
  }
  if (command === 'create' && !parsed.options.get('user')) {
    console.error(usage);
    return 2;
  }
  const config = readConfig();
  const wipe = parsed.flags.has('wipe');
  if (command === 'revoke' && config.upstreamBaseUrl) {
    // Proxy mode: tokens are the upstream's. The proxy can only be told to wipe one (by its value).
    const token = parsed.positionals[0]!;
    if (!wipe) {
      console.error('[token] proxy mode (UPSTREAM_BASE_URL): tokens belong to the upstream; revoke them there. To have this proxy wipe a device: npm run token -- revoke <token> --wipe');
      return 2;
    }
    const { db, close } = await openDb({ dataDir: config.dataDir });
    try {
      await recordWipedToken(db, token);
    } finally {
      await close();
    }
    console.error(`[token] proxy mode: requests with ${token.slice(0, 6)}… are now answered device_wiped by this proxy (DATA_DIR=${config.dataDir}); revoke it at the upstream too.`);
    console.error('[token] changes made on that device and not yet synced are lost.');
    console.log(`wiped ${token.slice(0, 6)}…`);
    return 0;
  }
  const label = parsed.options.get('label');
  const problem = label === undefined ? null : labelProblem(label);
  if (problem) {
    console.error(`[token] refused: ${problem}`);
    return 2;
  }
  const target = parsed.positionals[0];
  if (command === 'revoke' && target && config.staticTokens.has(target)) {
    console.error(
      `[token] ${target.slice(0, 6)}… is a static token of user "${config.staticTokens.get(target)}" from PARLEY_TOKENS, not a stored one: ` +
        'remove it from PARLEY_TOKENS and restart the server (every instance) to revoke it.',
    );
    return 1;
  }
  // Tokens live in the server's database: say which one this is, and never make up a new, empty
  // one by accident (a token created there would not work; a listing would wrongly say "none").
  // Only `create` with DATA_DIR given explicitly may start a new database (provisioning tokens
  // before the server's first start).
  if (config.databaseUrl) {
    console.error(`[token] database: PostgreSQL at ${printable(config.databaseUrl)} (DATABASE_URL)`);
  } else {
    const file = path.join(config.dataDir, SQLITE_FILE);
    const explicitDataDir = Boolean(process.env.DATA_DIR);
    if (!fs.existsSync(file) && command === 'create' && explicitDataDir) {
      console.error(`[token] database: SQLite at ${file} — new: created now (the server uses it when started with DATA_DIR=${config.dataDir})`);
    } else if (!fs.existsSync(file)) {
      console.error(
        `[token] no database at ${file}: nothing to ${command === 'create' ? 'add the token to' : 'read'}.\n` +
          `[token] Point this at the server's data: DATA_DIR=<the server's DATA_DIR> npm run token -- ${args.join(' ')}\n` +
          '[token] (or DATABASE_URL=postgres://… when the server runs on PostgreSQL). A new server creates its database on first start.',
      );
      return 1;
    } else {
      console.error(`[token] database: SQLite at ${file} (DATA_DIR=${config.dataDir})`);
    }
  }
  const { db, close } = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (command === 'create') {
      const user = parsed.options.get('user')!;
      const { token, id } = await createToken(db, user, label ?? null);
      console.error(`created token ${id} for user ${user}; it is shown once, keep it safe:`);
      console.log(token);
      return 0;
    }
    if (command === 'list') {
      const tokens = await listTokens(db);
      if (tokens.length === 0) console.log('no stored tokens');
      for (const t of tokens) {
        const wiped = t.wiped_at === null ? '' : `  [wiped ${new Date(t.wiped_at * 1000).toISOString()}]`;
        const device = t.kind === 'device' ? `  [device; last seen ${t.last_seen_at === null ? 'never' : new Date(Number(t.last_seen_at) * 1000).toISOString()}]` : '';
        console.log(`${t.id}  ${t.user_id}  ${new Date(t.created_at * 1000).toISOString()}  ${printableLabel(t.label ?? '')}${wiped}${device}`.trimEnd());
      }
      return 0;
    }
    if (command === 'revoke' && target) {
      // The revocation and its audit row (user of the token, its id) commit together.
      const n = await db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom('tokens')
          .select(['id', 'user_id'])
          .where((eb) => eb.or([eb('id', '=', target), eb('token_hash', '=', hashToken(target))]))
          .executeTakeFirst();
        const done = await revokeToken(trx, target, { wipe });
        if (row && done) {
          await recordAudit(trx, { user: row.user_id, token: row.id, action: wipe ? 'wipe' : 'revoke', objectType: 'token', objectId: row.id, outcome: 'ok' });
        }
        return done;
      });
      if (n && wipe) {
        console.log(`revoked ${target} with wipe`);
        console.error('[token] its device erases everything of the user it holds at its next request (within 10 s for a running server); changes made there and not yet synced are lost.');
      } else if (n) console.log(`revoked ${target}`);
      else {
        console.log(`no such stored token: ${target}`);
        console.error(
          '[token] a static token (PARLEY_TOKENS) is not stored and cannot be revoked here: remove it from PARLEY_TOKENS and restart the server. ' +
            '`npm run token -- list` shows the stored ones.',
        );
      }
      return n ? 0 : 1;
    }
    console.error(usage);
    return 2;
  } finally {
    await close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);

// npm run token -- create --user alice [--label phone] | list | revoke <id-or-token> [--wipe]
import fs from 'node:fs';
import path from 'node:path';
import { readConfig } from '../lib/config';
import { openDb } from '../lib/api/storage/db';
import { createToken, labelProblem, listTokens, printableLabel, recordWipedToken, revokeToken } from '../lib/api/domain/tokens';

const usage = `usage:
  npm run token -- create --user <user> [--label <text>]
  npm run token -- list
  npm run token -- revoke <token-id or token> [--wipe]

  --wipe: the token stops working and its device is told to erase everything of the user it
          holds (401 device_wiped), at once, without asking. Changes made on that device and not
          yet synced are lost. In proxy mode (UPSTREAM_BASE_URL) give the token itself: the
          proxy answers device_wiped for it; revoke it at the upstream too.`;

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
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
  const config = readConfig();
  const wipe = command === 'revoke' && rest.includes('--wipe');
  if (command === 'revoke') rest.splice(0, rest.length, ...rest.filter((a) => a !== '--wipe'));
  if (command === 'revoke' && config.upstreamBaseUrl) {
    // Proxy mode: tokens are the upstream's. The proxy can only be told to wipe one (by its value).
    if (!wipe || !rest[0]) {
      console.error(`[token] proxy mode (UPSTREAM_BASE_URL): tokens belong to the upstream; revoke them there. To have this proxy wipe a device: npm run token -- revoke <token> --wipe`);
      return 2;
    }
    const { db, close } = await openDb({ dataDir: config.dataDir });
    try {
      await recordWipedToken(db, rest[0]);
    } finally {
      await close();
    }
    console.error(`[token] proxy mode: requests with ${rest[0].slice(0, 6)}… are now answered device_wiped by this proxy (DATA_DIR=${config.dataDir}); revoke it at the upstream too.`);
    console.error('[token] changes made on that device and not yet synced are lost.');
    console.log(`wiped ${rest[0].slice(0, 6)}…`);
    return 0;
  }
  // Refused before any database is opened or created.
  const label = command === 'create' ? option(rest, 'label') : undefined;
  const problem = label === undefined ? null : labelProblem(label);
  if (problem) {
    console.error(`[token] refused: ${problem}`);
    return 2;
  }
  if (command === 'revoke' && rest[0] && config.staticTokens.has(rest[0])) {
    console.error(
      `[token] ${rest[0].slice(0, 6)}… is a static token of user "${config.staticTokens.get(rest[0])}" from PARLEY_TOKENS, not a stored one: ` +
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
      const user = option(rest, 'user');
      if (!user) {
        console.error(usage);
        return 2;
      }
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
        console.log(`${t.id}  ${t.user_id}  ${new Date(t.created_at * 1000).toISOString()}  ${printableLabel(t.label ?? '')}${wiped}`.trimEnd());
      }
      return 0;
    }
    if (command === 'revoke' && rest[0]) {
      const n = await revokeToken(db, rest[0], { wipe });
      if (n && wipe) {
        console.log(`revoked ${rest[0]} with wipe`);
        console.error('[token] its device erases everything of the user it holds at its next request (within 10 s for a running server); changes made there and not yet synced are lost.');
      } else if (n) console.log(`revoked ${rest[0]}`);
      else {
        console.log(`no such stored token: ${rest[0]}`);
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

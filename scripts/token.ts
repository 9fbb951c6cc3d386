// npm run token -- create --user alice [--label phone] | list | revoke <id-or-token>
import { readConfig } from '../lib/config';
import { openDb } from '../lib/api/db';
import { createToken, listTokens, revokeToken } from '../lib/api/tokens';

const usage = `usage:
  npm run token -- create --user <user> [--label <text>]
  npm run token -- list
  npm run token -- revoke <token-id or token>`;

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  const config = readConfig();
  const { db, close } = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (command === 'create') {
      const user = option(rest, 'user');
      if (!user) {
        console.error(usage);
        return 2;
      }
      const { token, id } = await createToken(db, user, option(rest, 'label') ?? null);
      console.error(`created token ${id} for user ${user}; it is shown once, keep it safe:`);
      console.log(token);
      return 0;
    }
    if (command === 'list') {
      const tokens = await listTokens(db);
      if (tokens.length === 0) console.log('no stored tokens');
      for (const t of tokens) {
        console.log(`${t.id}  ${t.user_id}  ${new Date(t.created_at * 1000).toISOString()}  ${t.label ?? ''}`.trimEnd());
      }
      return 0;
    }
    if (command === 'revoke' && rest[0]) {
      const n = await revokeToken(db, rest[0]);
      console.log(n ? `revoked ${rest[0]}` : `no such token: ${rest[0]}`);
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

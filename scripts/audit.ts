// npm run audit -- [--user <user>] [--since <date>] [--object <id>] [--json]
// Prints the audit trail (lib/api/domain/audit.ts) from the server's database, oldest first.
import fs from 'node:fs';
import path from 'node:path';
import { readConfig } from '../lib/config';
import { openDb, SQLITE_FILE } from '../lib/api/storage/db';
import { readAudit } from '../lib/api/domain/audit';
import { formatJson, formatTable, parseArguments } from '../lib/api/domain/audit-report';

const usage = `usage:
  npm run audit -- [--user <user>] [--since <date>] [--object <id>] [--json]

  --user    only this user's records
  --since   only records from then on: YYYY-MM-DD (UTC midnight) or an ISO time with its
            zone (2026-11-01T08:00:00Z, 2026-11-01T09:00:00+01:00)
  --object  only records of this conversation, file, upload or token id (a conversation's
            own records, and lists filtered by it)
  --json    one JSON object per line instead of a table

  Reads the server's database: DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL), as the server does.`;

async function main(args: string[]): Promise<number> {
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    console.log(usage);
    return 0;
  }
  // Refused before any database is opened.
  const parsed = parseArguments(args);
  if (typeof parsed === 'string') {
    console.error(`[audit] refused: ${parsed}\n${usage}`);
    return 2;
  }
  const config = readConfig();
  if (config.upstreamBaseUrl) {
    console.error('[audit] proxy mode (UPSTREAM_BASE_URL): this server keeps no records; the audit trail is the upstream\'s — run this there.');
    return 2;
  }
  if (!config.databaseUrl) {
    const file = path.join(config.dataDir, SQLITE_FILE);
    if (!fs.existsSync(file)) {
      console.error(`[audit] no database at ${file}. Point this at the server's data: DATA_DIR=<the server's DATA_DIR> (or DATABASE_URL=postgres://…).`);
      return 1;
    }
  }
  const { db, close } = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    const rows = await readAudit(db, parsed.query);
    if (parsed.json) {
      for (const row of rows) console.log(formatJson(row));
    } else {
      console.log(formatTable(rows));
      console.error(`[audit] ${rows.length} record${rows.length === 1 ? '' : 's'}`);
    }
    return 0;
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

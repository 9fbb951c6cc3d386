// A separate process that does what the service does for `POST /v1/conversations` with an
// Idempotency-Key — claims the key, creates the conversation — and then stops inside that request
// until the parent sends "finish" (it then commits) or kills it (as a crash would).
// argv: dataDir, databaseUrl or "-", user, key, contact_id. Run with `node --import tsx`.
import { Conversations } from '../../lib/api/domain/conversations';
import { IdempotencyStore } from '../../lib/api/domain/idempotency';
import { openDb } from '../../lib/api/storage/db';

const [dataDir, databaseUrl, user, key, contactId] = process.argv.slice(2) as [string, string, string, string, string];
const opened = await openDb({ dataDir, databaseUrl: databaseUrl === '-' ? null : databaseUrl });
const store = new IdempotencyStore(opened.db, true, { dialect: opened.dialect, waitMs: 60_000 });
const conversations = new Conversations(opened.db);
let finish!: () => void;
const finishing = new Promise<void>((resolve) => (finish = resolve));
process.on('message', (message) => message === 'finish' && finish());
process.on('disconnect', () => process.exit(1)); // never outlive the test that started it

await store.run(
  user,
  key,
  () => ({ method: 'POST', path: '/v1/conversations', content: { contact_id: contactId } }),
  async (trx) => {
    const body = await conversations.create(trx, user, { contact_id: contactId });
    process.send!('claimed');
    await finishing;
    return { status: 201, body };
  },
);
await opened.close();
process.removeAllListeners('disconnect');
process.send!('done', () => process.disconnect());

// Setup file of the `sealed` test project (vitest.config.ts): the sync suite again, with the
// user's databases sealed as on a device with a lock (lib/sync/mirror/seal.ts). Everything the
// engine, pull, outbox and screens' queries do must work the same through the seal.
import { setSealer } from '../../lib/sync/mirror/seal';
import { createSealer, deriveMirrorKeys } from '../../lib/sync/mirror/sealer';

setSealer(createSealer(await deriveMirrorKeys(crypto.getRandomValues(new Uint8Array(32)))));

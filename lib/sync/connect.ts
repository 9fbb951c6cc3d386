// What the app's shell uses to start syncing: the page side of the sync worker. An entry of its own,
// not page.ts: the sync worker bundles lib/offline, which reads the mirror through page.ts, and a
// page.ts that named the sync worker's own URL (connect.ts starts it) would make the worker's bundle
// contain itself (Turbopack panics on it). Only app/ imports it.
export { connectSync, openConnectionDb, type SyncConnection } from './session/connect';

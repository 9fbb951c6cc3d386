// The floor's IndexedDB (Dexie, as the app's mirror): conversations in the API's shape, an index
// for the list's order (newest first). Filled by /seed (its own route, so its code is not in /first-screen's JS).
import { Dexie } from 'dexie';

export const db = new Dexie('floor');
db.version(1).stores({ conversations: 'id, created_at' });

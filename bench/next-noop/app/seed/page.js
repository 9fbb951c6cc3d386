// Fills the first-screen floor's IndexedDB: /seed?n=1000 writes n conversations (the API's
// shape, as the app's mirror holds them) and says so in <output data-seeded="n">. Its own route:
// its code is not part of /first-screen's first load.
import { Seed } from './Seed';

export default function Page() {
  return <Seed />;
}

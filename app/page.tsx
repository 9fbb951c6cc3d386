import { BootShell } from './_components/BootShell';
import { ParleyApp } from './_components/ParleyApp';

// The one page: every route lives in the query string and is rendered on the client from the
// local database, so the service worker's precached copy of this page serves all of them offline.
export default function HomePage() {
  return <ParleyApp boot={<BootShell />} />;
}

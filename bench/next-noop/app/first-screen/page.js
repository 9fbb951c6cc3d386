// The first-screen floor (issue 22): a server page holding one client component that reads 60
// rows from IndexedDB with Dexie's useLiveQuery and renders them — what any Next app-router page
// showing a mirrored list must load and run at least. Compared with Parley's signed-in first
// screen by `npm run bench -- app first-screen` (bench/scenarios/first-screen.ts).
import { FirstScreen } from './FirstScreen';

export default function Page() {
  return (
    <main>
      <h1>Conversations</h1>
      <FirstScreen />
    </main>
  );
}

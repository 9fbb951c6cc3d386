// The frame of the diagnostics (bench/trace-*.ts): dave's 1,000 conversations mirrored in a signed-in
// browser context, as the first-screen scenario prepares it; `body` works with it; everything
// started is stopped after, and the process exits.
import type { BrowserContext } from 'playwright-core';
import { appContext } from '../scenarios/first-screen';
import { daveData, FIRST_SCREEN_CONVERSATIONS, releaseAliceMirror, syncWorld, type SyncWorld } from './mirror';
import { installExitHooks, stopAll } from './proc';

export async function runDiagnostic(body: (w: SyncWorld, context: BrowserContext) => Promise<void>): Promise<never> {
  installExitHooks();
  await releaseAliceMirror();
  const w = await syncWorld((m) => console.log(m));
  daveData(w);
  const context = await appContext(w, 'dave', FIRST_SCREEN_CONVERSATIONS, (m) => console.log(m));
  await body(w, context);
  await context.close();
  await w.browser.close();
  await stopAll();
  process.exit(0);
}

// Types for build-lock.mjs (plain JavaScript, so that `npm start` runs with plain node).
export const BUILD_LOCK: string;
export function withBuildLock<T>(
  root: string,
  work: () => Promise<T>,
  options?: { onWait?: () => void; pollMs?: number; staleMs?: number },
): Promise<T>;

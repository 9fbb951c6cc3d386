'use client';
import { useSyncExternalStore } from 'react';

const NARROW = '(max-width: 700px)';

/** On a phone, columns marked `wide-only` are left out (not just hidden), so the grid has no empty tracks. */
export function useNarrow(): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const query = window.matchMedia(NARROW);
      query.addEventListener('change', onChange);
      return () => query.removeEventListener('change', onChange);
    },
    () => window.matchMedia(NARROW).matches,
    () => false,
  );
}


'use client';
import { useSyncExternalStore } from 'react';

const NARROW = '(max-width: 700px)';
/** Room for the conversations list beside the open conversation (ParleyApp's two panes). */
const WIDE = '(min-width: 1024px)';

function useMedia(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    () => window.matchMedia(query).matches,
    () => false,
  );
}

/** On a phone, columns marked `wide-only` are left out (not just hidden), so the grid has no empty tracks. */
export const useNarrow = (): boolean => useMedia(NARROW);

/** On a wide screen the list stays on screen beside the conversation; one screen at a time below. */
export const useWide = (): boolean => useMedia(WIDE);

'use client';
// Which slice of a long list to read: the visible rows plus a margin, in blocks, so that scrolling
// a little does not read again and scrolling far reads only the new neighbourhood.
import { useCallback, useState } from 'react';

const BLOCK = 50;
/** Rows read around the visible ones (first-rows.ts reads the first window before the list mounts). */
export const LIST_WINDOW_SIZE = 4 * BLOCK;

export function useListWindow() {
  const [windowStart, setWindowStart] = useState(0);
  const onVisibleRange = useCallback((first: number, last: number) => {
    setWindowStart((current) => {
      // Keep the window while the visible rows are inside it, with a block to spare either side.
      if (first >= current + (current > 0 ? BLOCK : 0) && last < current + LIST_WINDOW_SIZE - BLOCK) return current;
      return Math.max(0, Math.floor(first / BLOCK) * BLOCK - BLOCK);
    });
  }, []);
  return { windowStart, windowSize: LIST_WINDOW_SIZE, onVisibleRange };
}

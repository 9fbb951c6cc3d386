'use client';
// Which slice of a long list to read: the visible rows plus a margin, in blocks, so that scrolling
// a little does not read again and scrolling far reads only the new neighbourhood.
import { useCallback, useState } from 'react';

const BLOCK = 50;
const SIZE = 4 * BLOCK;

export function useListWindow() {
  const [windowStart, setWindowStart] = useState(0);
  const onVisibleRange = useCallback((first: number, last: number) => {
    setWindowStart((current) => {
      // Keep the window while the visible rows are inside it, with a block to spare either side.
      if (first >= current + (current > 0 ? BLOCK : 0) && last < current + SIZE - BLOCK) return current;
      return Math.max(0, Math.floor(first / BLOCK) * BLOCK - BLOCK);
    });
  }, []);
  return { windowStart, windowSize: SIZE, onVisibleRange };
}

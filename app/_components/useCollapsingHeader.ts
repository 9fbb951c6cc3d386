'use client';
// The list screens' header folds away while scrolling down on a phone (lib/view/collapsing-header.ts).
import { useCallback, useRef, useState } from 'react';
import { HEADER_OPEN, headerAfterScroll } from '@/lib/view/collapsing-header';

/** `enabled`: on a phone only; a wide screen has room for the header. */
export function useCollapsingHeader(enabled: boolean) {
  const state = useRef(HEADER_OPEN);
  const [collapsed, setCollapsed] = useState(false);
  const onScroll = useCallback((scroller: HTMLElement) => {
    state.current = headerAfterScroll(state.current, scroller.scrollTop, scroller.scrollHeight - scroller.clientHeight);
    setCollapsed(state.current.collapsed);
  }, []);
  return { collapsed: enabled && collapsed, onScroll };
}

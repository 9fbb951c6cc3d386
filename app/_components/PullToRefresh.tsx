'use client';
// Pull to refresh, as messaging apps do: on a touch screen, a drag down from the top of a list and
// let go far enough down asks for a sync (the same as "Sync now"). Touch events, not pointer
// events: the browser takes a vertical drag for its own scrolling and cancels the pointer. The
// list's own `overscroll-behavior-y: contain` keeps the browser's pull-to-reload out of it. The
// indicator has its own state, so a drag re-renders it alone, never the rows.
import { useEffect, useState, type RefObject } from 'react';

/** How far (px, after damping) a pull must go to sync when let go. */
export const PULL_THRESHOLD = 56;
const MAX_PULL = 96;

export type PullState = { phase: 'idle' } | { phase: 'pulling' | 'armed'; distance: number } | { phase: 'syncing' };

/** The pure step: where a pull is after the finger moved `dy` px down from where it started. */
export function pullAfter(dy: number): PullState {
  if (dy <= 0) return { phase: 'idle' };
  // Damped, like a rubber band: the list gives half the finger's travel, up to MAX_PULL.
  const distance = Math.min(MAX_PULL, dy / 2);
  return { phase: distance >= PULL_THRESHOLD ? 'armed' : 'pulling', distance };
}

function usePullToRefresh(scroller: RefObject<HTMLElement | null>, onRefresh: () => Promise<unknown>): PullState {
  const [state, setState] = useState<PullState>({ phase: 'idle' });
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    let startY: number | null = null;
    let current: PullState = { phase: 'idle' };
    const set = (next: PullState) => {
      current = next;
      setState(next);
    };
    const onStart = (e: TouchEvent) => {
      // Only a one-finger drag that starts with the list at its top, and not while a sync runs.
      startY = e.touches.length === 1 && el.scrollTop <= 0 && current.phase !== 'syncing' ? e.touches[0].clientY : null;
    };
    const onMove = (e: TouchEvent) => {
      if (startY === null) return;
      // The list moved (the user scrolls it): not a pull.
      if (el.scrollTop > 0) {
        startY = null;
        if (current.phase !== 'idle') set({ phase: 'idle' });
        return;
      }
      set(pullAfter(e.touches[0].clientY - startY));
    };
    const onEnd = () => {
      if (startY === null) return;
      startY = null;
      if (current.phase !== 'armed') {
        if (current.phase !== 'idle') set({ phase: 'idle' });
        return;
      }
      set({ phase: 'syncing' });
      // A failed sync shows in the status pill; here the indicator just goes away.
      onRefresh()
        .catch(() => undefined)
        .finally(() => set({ phase: 'idle' }));
    };
    el.addEventListener('touchstart', onStart, { passive: true });
    el.addEventListener('touchmove', onMove, { passive: true });
    el.addEventListener('touchend', onEnd);
    el.addEventListener('touchcancel', onEnd);
    return () => {
      el.removeEventListener('touchstart', onStart);
      el.removeEventListener('touchmove', onMove);
      el.removeEventListener('touchend', onEnd);
      el.removeEventListener('touchcancel', onEnd);
    };
  }, [scroller, onRefresh]);
  return state;
}

const words = { pulling: 'Pull to sync', armed: 'Release to sync', syncing: 'Syncing…' } as const;

/**
 * Shown over the top of the list while pulling. Hidden from screen readers: the gesture is for
 * touch, and what it does (syncing, then "Last synced …") is in the status beside "Sync now".
 */
export function PullToRefresh({ scroller, onRefresh }: { scroller: RefObject<HTMLElement | null>; onRefresh(): Promise<unknown> }) {
  const state = usePullToRefresh(scroller, onRefresh);
  if (state.phase === 'idle') return null;
  const distance = state.phase === 'syncing' ? PULL_THRESHOLD : state.distance;
  return (
    <div className={`pull-indicator ${state.phase}`} aria-hidden="true" data-testid="pull-indicator" style={{ transform: `translate(-50%, ${distance}px)` }}>
      <span className="pull-arrow">↓</span> {words[state.phase]}
    </div>
  );
}

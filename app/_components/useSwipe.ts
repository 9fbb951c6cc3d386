'use client';
// A horizontal swipe by touch: the element follows the finger (`offset`, for a translateX) and,
// released far enough, `onSwipe` is told which way; otherwise it springs back (offset 0). The
// element must have `touch-action: pan-y`: vertical moves stay the browser's (native scrolling,
// which cancels the pointer: pointercancel resets). Mouse and pen are left alone.
import { useRef, useState, type MouseEvent, type PointerEvent } from 'react';

export type SwipeDirection = 'left' | 'right';

/** Movement (px) before a touch counts as a swipe. */
const SLOP = 10;
/** A release acts past 30% of the element's width, at most this (px). */
const MAX_THRESHOLD = 96;

export function useSwipe(onSwipe: (direction: SwipeDirection) => void) {
  const [offset, setOffset] = useState(0);
  const gesture = useRef<{ pointer: number; x: number; y: number; threshold: number; swiping: boolean } | null>(null);
  // Set by a swipe's release, so that the click which may follow does not open the link.
  const swiped = useRef(false);
  const reset = () => {
    gesture.current = null;
    setOffset(0);
  };
  const handlers = {
    onPointerDown(e: PointerEvent<HTMLElement>) {
      swiped.current = false;
      if (e.pointerType !== 'touch' || !e.isPrimary) return;
      const threshold = Math.min(MAX_THRESHOLD, 0.3 * e.currentTarget.getBoundingClientRect().width);
      gesture.current = { pointer: e.pointerId, x: e.clientX, y: e.clientY, threshold, swiping: false };
    },
    onPointerMove(e: PointerEvent<HTMLElement>) {
      const g = gesture.current;
      if (!g || e.pointerId !== g.pointer) return;
      const dx = e.clientX - g.x;
      if (!g.swiping) {
        const dy = Math.abs(e.clientY - g.y);
        // Mostly vertical: a scroll, the browser's (it cancels the pointer too).
        if (dy > SLOP && dy > Math.abs(dx)) gesture.current = null;
        if (dy > Math.abs(dx) || Math.abs(dx) <= SLOP) return;
        g.swiping = true;
      }
      setOffset(dx);
    },
    onPointerUp(e: PointerEvent<HTMLElement>) {
      const g = gesture.current;
      if (!g || e.pointerId !== g.pointer) return;
      reset();
      if (!g.swiping) return;
      swiped.current = true;
      const dx = e.clientX - g.x;
      if (Math.abs(dx) >= g.threshold) onSwipe(dx < 0 ? 'left' : 'right');
    },
    onPointerCancel: reset,
    onClickCapture(e: MouseEvent<HTMLElement>) {
      if (!swiped.current) return;
      swiped.current = false;
      e.preventDefault();
      e.stopPropagation();
    },
  };
  return { offset, handlers };
}

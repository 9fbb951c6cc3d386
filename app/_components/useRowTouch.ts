'use client';
// A list row's touch gestures. A horizontal swipe: the element follows the finger (`offset`, for a
// translateX) and, released far enough, `onSwipe` is told which way; otherwise it springs back
// (offset 0). A long press, a finger held still for LONG_PRESS_MS: `onLongPress`. Not the
// `contextmenu` event: iOS Safari never fires it on a link, and Chromium's comes later. The
// element must have `touch-action: pan-y`: vertical moves stay the browser's (native scrolling,
// which cancels the pointer: pointercancel resets). Mouse and pen are left alone. After either
// gesture, the click that may follow the finger's release does not open the link.
import { useEffect, useRef, useState, type MouseEvent, type PointerEvent } from 'react';

export type SwipeDirection = 'left' | 'right';

/** Movement (px) before a touch counts as a swipe, and that cancels a long press. */
const SLOP = 10;
/** A release acts past 30% of the element's width, at most this (px). */
const MAX_THRESHOLD = 96;
/** A finger held still this long (ms) is a long press: about what Android and iOS use. */
export const LONG_PRESS_MS = 500;

type Gesture = { pointer: number; x: number; y: number; threshold: number; swiping: boolean; hold: number | undefined };

export function useRowTouch({ onSwipe, onLongPress }: { onSwipe(direction: SwipeDirection): void; onLongPress(): void }) {
  const [offset, setOffset] = useState(0);
  const gesture = useRef<Gesture | null>(null);
  // Set by a swipe's release or a long press, so that the click which may follow does not open the link.
  const handled = useRef(false);
  const reset = () => {
    window.clearTimeout(gesture.current?.hold);
    gesture.current = null;
    setOffset(0);
  };
  // A row scrolled out of the list (rows are virtualised) while a finger is held on it.
  useEffect(() => () => window.clearTimeout(gesture.current?.hold), []);
  const handlers = {
    onPointerDown(e: PointerEvent<HTMLElement>) {
      handled.current = false;
      window.clearTimeout(gesture.current?.hold);
      gesture.current = null;
      if (e.pointerType !== 'touch' || !e.isPrimary) return;
      const threshold = Math.min(MAX_THRESHOLD, 0.3 * e.currentTarget.getBoundingClientRect().width);
      const g: Gesture = { pointer: e.pointerId, x: e.clientX, y: e.clientY, threshold, swiping: false, hold: undefined };
      g.hold = window.setTimeout(() => {
        if (gesture.current !== g) return;
        gesture.current = null; // what the finger does next is not a swipe
        handled.current = true;
        onLongPress();
      }, LONG_PRESS_MS);
      gesture.current = g;
    },
    onPointerMove(e: PointerEvent<HTMLElement>) {
      const g = gesture.current;
      if (!g || e.pointerId !== g.pointer) return;
      const dx = e.clientX - g.x;
      if (!g.swiping) {
        const dy = Math.abs(e.clientY - g.y);
        if (Math.hypot(dx, dy) > SLOP) window.clearTimeout(g.hold);
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
      handled.current = true;
      const dx = e.clientX - g.x;
      if (Math.abs(dx) >= g.threshold) onSwipe(dx < 0 ? 'left' : 'right');
    },
    onPointerCancel: reset,
    // A click from the keyboard follows no gesture (a swipe's or long press's mark may be left set
    // when no click came after it).
    onKeyDown() {
      handled.current = false;
    },
    onClickCapture(e: MouseEvent<HTMLElement>) {
      if (!handled.current) return;
      handled.current = false;
      e.preventDefault();
      e.stopPropagation();
    },
  };
  return { offset, handlers };
}

// When a list's header (title, search, filters) folds away on a phone, as in the messaging apps
// people know: scrolling down through the list folds it, scrolling back up a little or reaching
// the top brings it back. Pure: the screen feeds it each scroll position.

export interface HeaderState {
  collapsed: boolean;
  /** The last scrollTop seen. */
  top: number;
  /** Distance scrolled in the current direction (px; negative = up). */
  travel: number;
}

export const HEADER_OPEN: HeaderState = { collapsed: false, top: 0, travel: 0 };

/** Scrolled this far down in one go, past the first rows: fold. */
const FOLD_AFTER = 24;
/** Scrolled this far back up in one go: unfold (more than FOLD_AFTER, so a jitter does neither). */
const UNFOLD_AFTER = 48;
/** Above this, the header always shows: the first rows are in view. */
const NEAR_TOP = 48;

/**
 * The header's state after the list scrolled to `top`, out of `max` (scrollHeight - clientHeight).
 * Folding makes the list taller, which can pull `top` back when the list is scrolled to its end:
 * that is not the user scrolling up, so at the end nothing unfolds.
 */
export function headerAfterScroll(state: HeaderState, top: number, max: number): HeaderState {
  if (top <= 0) return HEADER_OPEN;
  const delta = top - state.top;
  const travel = delta === 0 ? state.travel : Math.sign(delta) === Math.sign(state.travel) ? state.travel + delta : delta;
  let collapsed = state.collapsed;
  if (!collapsed && travel >= FOLD_AFTER && top > NEAR_TOP) collapsed = true;
  else if (collapsed && travel <= -UNFOLD_AFTER && top < max - 1) collapsed = false;
  return { collapsed, top, travel };
}

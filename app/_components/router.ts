'use client';
// Client-side routes in the query string (`/`, `/?c=<id>`, `/?view=files`, `/?file=<id>`, and
// `/?file=<id>&in=<conversation id>` for a file opened from its conversation's page, which a wide
// screen shows beside the list, ParleyApp): every navigation is the one precached page, so the
// service worker can serve any of them offline.
import { useSyncExternalStore } from 'react';

export type Route =
  | { name: 'conversations' }
  | { name: 'conversation'; id: string }
  | { name: 'files'; conversationId?: string }
  | { name: 'device' }
  | { name: 'devices' }
  | { name: 'file'; id: string; conversationId?: string };

const EVENT = 'parley:navigate';

export function parseRoute(search: string): Route {
  const params = new URLSearchParams(search);
  const id = params.get('c');
  if (id) return { name: 'conversation', id };
  const file = params.get('file');
  if (file) return { name: 'file', id: file, conversationId: params.get('in') ?? undefined };
  if (params.get('view') === 'files') return { name: 'files', conversationId: params.get('in') ?? undefined };
  if (params.get('view') === 'device') return { name: 'device' };
  if (params.get('view') === 'devices') return { name: 'devices' };
  return { name: 'conversations' };
}

export function hrefFor(route: Route): string {
  if (route.name === 'conversation') return `/?c=${encodeURIComponent(route.id)}`;
  if (route.name === 'files') return route.conversationId ? `/?view=files&in=${encodeURIComponent(route.conversationId)}` : '/?view=files';
  if (route.name === 'device') return '/?view=device';
  if (route.name === 'devices') return '/?view=devices';
  if (route.name === 'file') return `/?file=${encodeURIComponent(route.id)}${route.conversationId ? `&in=${encodeURIComponent(route.conversationId)}` : ''}`;
  return '/';
}

export function navigate(route: Route, options: { replace?: boolean } = {}): void {
  const href = hrefFor(route);
  // Entries made here are marked, so a screen's back button can go back instead of forward to a
  // fixed place when the user came from within the app (canGoBack).
  if (options.replace) history.replaceState(canGoBack() ? { parley: true } : null, '', href);
  else history.pushState({ parley: true }, '', href);
  window.dispatchEvent(new Event(EVENT));
}

/**
 * A screen's temporary id became the server's (an alias): the address follows it, replacing its
 * entry — only while the address still names `from`. The alias can arrive after the user went
 * back (the popstate came before the screen unmounted); following it then replaced the entry they
 * went back to, and sent them forward to the screen they had left.
 */
export function followAlias(from: Route, to: Route): void {
  if (`${window.location.pathname}${window.location.search}` !== hrefFor(from)) return;
  navigate(to, { replace: true });
}

/** True when the previous history entry is a screen of this app (not another site or a fresh tab). */
export function canGoBack(): boolean {
  return (history.state as { parley?: boolean } | null)?.parley === true;
}

function subscribe(onChange: () => void) {
  window.addEventListener('popstate', onChange);
  window.addEventListener(EVENT, onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener(EVENT, onChange);
  };
}

export function useRoute(): Route {
  const search = useSyncExternalStore(subscribe, () => window.location.search, () => '');
  return parseRoute(search);
}

'use client';
// Client-side routes in the query string (`/`, `/?c=<id>`, `/?view=files`): every navigation is
// the one precached page, so the service worker can serve any of them offline.
import { useSyncExternalStore } from 'react';

export type Route =
  | { name: 'conversations' }
  | { name: 'conversation'; id: string }
  | { name: 'files'; conversationId?: string }
  | { name: 'device' };

const EVENT = 'parley:navigate';

export function parseRoute(search: string): Route {
  const params = new URLSearchParams(search);
  const id = params.get('c');
  if (id) return { name: 'conversation', id };
  if (params.get('view') === 'files') return { name: 'files', conversationId: params.get('in') ?? undefined };
  if (params.get('view') === 'device') return { name: 'device' };
  return { name: 'conversations' };
}

export function hrefFor(route: Route): string {
  if (route.name === 'conversation') return `/?c=${encodeURIComponent(route.id)}`;
  if (route.name === 'files') return route.conversationId ? `/?view=files&in=${encodeURIComponent(route.conversationId)}` : '/?view=files';
  if (route.name === 'device') return '/?view=device';
  return '/';
}

export function navigate(route: Route, options: { replace?: boolean } = {}): void {
  const href = hrefFor(route);
  if (options.replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.dispatchEvent(new Event(EVENT));
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

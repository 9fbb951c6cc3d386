// @vitest-environment node
// A temporary id followed to the server's (app/_components/router.ts followAlias): only while the
// address still names the screen. The alias of a conversation created with "Create anyway"
// arrived after the user had gone back (typo.spec on a loaded CI run): following it replaced the
// list's entry and sent them forward to the conversation again.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { followAlias, hrefFor, parseRoute } from '../../app/_components/router';

let address: string;
const replaced: string[] = [];
beforeEach(() => {
  address = '/';
  replaced.length = 0;
  const location = { get pathname() { return new URL(address, 'http://h').pathname; }, get search() { return new URL(address, 'http://h').search; } };
  Object.assign(globalThis, {
    window: { location, dispatchEvent: () => true },
    history: { state: null, replaceState: (_state: unknown, _title: string, href: string) => { replaced.push(href); address = href; }, pushState: () => {} },
  });
});
afterEach(() => {
  delete (globalThis as { window?: unknown }).window;
  delete (globalThis as { history?: unknown }).history;
});

it('follows the alias while the screen is still the address', () => {
  address = '/?c=local_1';
  followAlias({ name: 'conversation', id: 'local_1' }, { name: 'conversation', id: 'C1' });
  expect(replaced).toEqual(['/?c=C1']);
});

it('does nothing once the user has gone elsewhere (back to the list, another screen)', () => {
  address = '/';
  followAlias({ name: 'conversation', id: 'local_1' }, { name: 'conversation', id: 'C1' });
  address = '/?file=F9';
  followAlias({ name: 'file', id: 'local_2' }, { name: 'file', id: 'F2' });
  expect(replaced).toEqual([]);
});

it('a file opened from its conversation keeps the conversation in its address, through an alias too', () => {
  const route = { name: 'file', id: 'local_3', conversationId: 'C1' } as const;
  expect(hrefFor(route)).toBe('/?file=local_3&in=C1');
  expect(parseRoute('?file=local_3&in=C1')).toEqual(route);
  expect(parseRoute('?file=F3')).toEqual({ name: 'file', id: 'F3', conversationId: undefined });
  address = '/?file=local_3&in=C1';
  followAlias(route, { ...route, id: 'F3' });
  expect(replaced).toEqual(['/?file=F3&in=C1']);
  // The same file opened from the Files screen (no conversation in the address) is another address.
  followAlias({ name: 'file', id: 'F3' }, { name: 'file', id: 'F4' });
  expect(replaced).toEqual(['/?file=F3&in=C1']);
});

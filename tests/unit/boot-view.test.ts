// The rule the page's inline script runs before anything else (lib/view/boot-view.ts): which frame
// to show, from the keys on the device and the route — the same route the router reads.
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseRoute } from '../../app/_components/router';
import { bootScript, bootView } from '../../lib/view/boot-view';

const keys = { token: 'parley:token', lock: 'parley:lock' };
const storage = (entries: Record<string, string>) => ({ getItem: (k: string) => entries[k] ?? null });

describe('bootView', () => {
  it('signed out, signed in, locked', () => {
    expect(bootView(storage({}), '', keys)).toBe('signin');
    expect(bootView(storage({}), '?c=abc', keys)).toBe('signin');
    expect(bootView(storage({ 'parley:token': 't' }), '', keys)).toBe('list');
    expect(bootView(storage({ 'parley:token': 't', 'parley:lock': '{}' }), '', keys)).toBe('plain');
    // A lock with its token sealed: there is no token in clear, and the lock screen comes first.
    expect(bootView(storage({ 'parley:lock': '{}' }), '', keys)).toBe('plain');
  });

  it('reads the list route as the router does', () => {
    const searches = ['', '?', '?c=x', '?file=f', '?file=f&in=x', '?view=files', '?view=files&in=x', '?view=device', '?view=devices', '?view=other', '?c=', '?pair=123', '?q=1'];
    for (const search of searches) {
      const list = parseRoute(search).name === 'conversations';
      expect(bootView(storage({ 'parley:token': 't' }), search, keys), search).toBe(list ? 'list' : 'app');
    }
  });

  it('the inline script runs on its own, and says plain when storage is refused', () => {
    const run = (localStorage: unknown, search = '') => {
      const documentElement = { dataset: {} as Record<string, string> };
      runInNewContext(bootScript(keys), { document: { documentElement }, localStorage, location: { search }, URLSearchParams });
      return documentElement.dataset.boot;
    };
    expect(run(storage({ 'parley:token': 't' }))).toBe('list');
    expect(run(storage({ 'parley:token': 't' }), '?view=files')).toBe('app');
    expect(run(storage({}))).toBe('signin');
    expect(run({ getItem: () => { throw new Error('SecurityError'); } })).toBe('plain');
  });
});

// PARLEY_EXTENSIONS: which /v1 extensions the embedded server offers (tests play plain servers).
import { describe, expect, it } from 'vitest';
import { ConfigError, EXTENSIONS, parseExtensions } from '../../lib/config';

const names = (env: Record<string, string>) => [...parseExtensions(env)].sort();

describe('PARLEY_EXTENSIONS', () => {
  it('defaults to all; "none" is a server with only the brief', () => {
    expect(names({})).toEqual([...EXTENSIONS].sort());
    expect(names({ PARLEY_EXTENSIONS: '' })).toEqual([...EXTENSIONS].sort());
    expect(names({ PARLEY_EXTENSIONS: 'none' })).toEqual([]);
  });

  it('takes a comma list, and refuses an unknown name', () => {
    expect(names({ PARLEY_EXTENSIONS: 'me' })).toEqual(['me']);
    expect(names({ PARLEY_EXTENSIONS: ' idempotency , me ' })).toEqual(['idempotency', 'me']);
    expect(() => parseExtensions({ PARLEY_EXTENSIONS: 'me,teleport' })).toThrow(ConfigError);
    expect(() => parseExtensions({ PARLEY_EXTENSIONS: 'me,' })).toThrow(/got ""/);
  });

  it('PARLEY_DISABLE_IDEMPOTENCY=1 still means "all but idempotency"', () => {
    expect(names({ PARLEY_DISABLE_IDEMPOTENCY: '1' })).toEqual(['devices', 'events', 'me', 'ratelimit', 'uploads']);
    expect(names({ PARLEY_DISABLE_IDEMPOTENCY: '1', PARLEY_EXTENSIONS: 'idempotency,me' })).toEqual(['me']);
  });
});

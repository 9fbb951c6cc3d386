// @vitest-environment node
// The route table's path parameters (lib/api/routes/router.ts): an `{id}` that is not an id is the
// route's missing resource (404), decided before the method; the same answer as the `Id` schema.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Id } from '../../lib/objects';
import { ROUTES } from '../../lib/api/routes';
import { Router } from '../../lib/api/routes/router';

const router = new Router(ROUTES);
const candidates = ['AAAAAAAAAAAAAAAA', 'abcDEF0123456789', 'AAAAAAAAAAAAAAA', 'AAAAAAAAAAAAAAAAA', 'AAAAAAAAAAAAAAA-', 'AAAAAAAAAAAAAAA\u00e9', '', 'AAAAAAAAAAAAAAAA\n'];

describe('path parameters', () => {
  it.each(['/v1/conversations/', '/v1/files/', '/v1/me/devices/'])('%s{id}: missing exactly when Id refuses the segment', (prefix) => {
    for (const id of candidates) {
      const match = router.find(`${prefix}${id}`);
      expect(match?.params).toEqual({ id });
      expect(match?.missing === null).toBe(Id.safeParse(id).success);
    }
  });

  it('a schema other than { id: Id } is parsed as it is written', () => {
    const route = { ...ROUTES[0], path: '/v1/things/{id}', params: z.strictObject({ id: z.literal('one') }), missing: 'thing' };
    const things = new Router([route]);
    expect(things.find('/v1/things/one')?.missing).toBeNull();
    expect(things.find('/v1/things/AAAAAAAAAAAAAAAA')?.missing).toBe('thing');
  });
});

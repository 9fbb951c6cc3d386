// @vitest-environment node
// The RateLimit fields as written onto an answer (lib/api/http/rate-limit.ts): the policy's text
// is written once per policy, and an upstream's fields (proxy mode), in whatever case, get this
// instance's items appended rather than a second field.
import { describe, expect, it } from 'vitest';
import { addRateLimitFields, type QuotaReading } from '../../lib/api/http/rate-limit';

const token = { name: 'token', quota: 100, window: 1, reserve: { quota: 2000, window: 60 } };
const writes = { name: 'writes', quota: 10, window: 1, reserve: null };
const readings: QuotaReading[] = [
  { policy: writes, remaining: 9, seconds: 1 },
  { policy: token, remaining: 1987, seconds: 1 },
];

describe('RateLimit fields on an answer', () => {
  it('one item per policy, the same text answer after answer', () => {
    for (let i = 0; i < 2; i++) {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      addRateLimitFields(headers, readings);
      expect(headers['RateLimit-Policy']).toBe('"writes";q=10;w=1, "token";q=100;w=1;parley-reserve=2000;parley-reserve-w=60');
      expect(headers.RateLimit).toBe('"writes";r=9;t=1, "token";r=1987;t=1');
    }
  });

  it("appended to an upstream's fields whatever their case; nothing added when nothing was counted", () => {
    const headers: Record<string, string> = { 'ratelimit-policy': '"up";q=5;w=1', RATELIMIT: '"up";r=4;t=1' };
    addRateLimitFields(headers, readings.slice(1));
    expect(headers).toEqual({
      'ratelimit-policy': '"up";q=5;w=1, "token";q=100;w=1;parley-reserve=2000;parley-reserve-w=60',
      RATELIMIT: '"up";r=4;t=1, "token";r=1987;t=1',
    });
    const untouched: Record<string, string> = {};
    addRateLimitFields(untouched, []);
    expect(untouched).toEqual({});
  });
});


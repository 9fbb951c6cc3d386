// The Host rule itself (lib/api/http/hosts.ts), on request shapes as the adapters make them; the
// servers' use of it is tested over real HTTP in tests/api/hosts.test.ts and the browser suite.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config';
import { HostPolicy } from '../../lib/api/http/hosts';
import type { ApiRequest } from '../../lib/api/http/exchange';

const request = (host: string | null, localPort = 3000, scheme: 'http' | 'https' = 'http'): ApiRequest => ({
  method: 'GET',
  path: '/v1/files',
  query: new URLSearchParams(),
  scheme,
  host,
  localPort,
  header: () => null,
  body: null,
});

const origin = (policy: HostPolicy, r: ApiRequest) => {
  try {
    return policy.assetBase(r);
  } catch (error) {
    return `refused: ${(error as { code: string; param: string }).code} ${(error as { param: string }).param}`;
  }
};
const REFUSED = 'refused: parameter_invalid Host';

describe('HostPolicy', () => {
  it('default, listening on all addresses: loopback names, the machine name and its interface addresses, on the port the request came in on', () => {
    const policy = new HostPolicy(readConfig({}));
    const own = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []).map((i) => (i.family === 'IPv6' ? `[${i.address}]` : i.address));
    for (const host of ['localhost', '127.0.0.1', '[::1]', os.hostname(), ...own]) {
      expect(origin(policy, request(`${host}:3000`)), host).toBe(`http://${host.toLowerCase()}:3000`);
      expect(origin(policy, request(`${host}:3001`)), host).toBe(REFUSED);
    }
    expect(origin(policy, request('localhost', 80))).toBe('http://localhost');
    expect(origin(policy, request('localhost', 443, 'https'))).toBe('https://localhost');
    expect(origin(policy, request('localhost', 443))).toBe(REFUSED); // http on 443: the Host means port 80
    expect(origin(policy, request('evil.example:3000'))).toBe(REFUSED);
    expect(origin(policy, request(null))).toBe(REFUSED);
  });

  it('default, listening on one address: that address instead of the interfaces', () => {
    const policy = new HostPolicy(readConfig({ HOSTNAME: '203.0.113.9' }));
    expect(origin(policy, request('203.0.113.9:3000'))).toBe('http://203.0.113.9:3000');
    expect(origin(policy, request('localhost:3000'))).toBe('http://localhost:3000');
    const others = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []).filter((i) => !i.internal && i.family === 'IPv4');
    for (const i of others) expect(origin(policy, request(`${i.address}:3000`)), i.address).toBe(REFUSED);
  });

  it('ALLOWED_HOSTS replaces the default; ASSET_URL makes the Host irrelevant', () => {
    const listed = new HostPolicy(readConfig({ ALLOWED_HOSTS: 'parley.example.org,10.0.0.5:3000' }));
    expect(origin(listed, request('Parley.Example.org', 443, 'https'))).toBe('https://parley.example.org');
    expect(origin(listed, request('parley.example.org:8443', 3000))).toBe('http://parley.example.org:8443');
    expect(origin(listed, request('10.0.0.5:3000'))).toBe('http://10.0.0.5:3000');
    expect(origin(listed, request('10.0.0.5:3001', 3001))).toBe(REFUSED);
    expect(origin(listed, request('localhost:3000'))).toBe(REFUSED);
    const asset = new HostPolicy(readConfig({ ASSET_URL: 'https://cdn.example.org/', ALLOWED_HOSTS: 'parley.example.org' }));
    expect(origin(asset, request('evil.example'))).toBe('https://cdn.example.org');
    expect(origin(asset, request(null))).toBe('https://cdn.example.org');
  });

  it('malformed Hosts are refused, never cleaned', () => {
    const policy = new HostPolicy(readConfig({ ALLOWED_HOSTS: 'evil.example' }));
    for (const host of ['evil.example"><script>', 'evil.example/x', 'u@evil.example', 'evil.example:99999x', 'evil.example:65536', 'evil.example:0', ' evil.example', '']) {
      expect(origin(policy, request(host)), host).toBe(REFUSED);
    }
  });
});

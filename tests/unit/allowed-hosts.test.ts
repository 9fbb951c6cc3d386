// ALLOWED_HOSTS is validated where configuration is read, with a message that says what is wrong.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseAllowedHosts, readConfig } from '../../lib/config';

describe('ALLOWED_HOSTS', () => {
  it('unset or empty: null (the default: loopback names and this machine on the server port)', () => {
    expect(parseAllowedHosts(undefined)).toBeNull();
    expect(parseAllowedHosts('  ')).toBeNull();
    expect(readConfig({}).allowedHosts).toBeNull();
  });

  it('a comma list of host or host:port, lowercased; IPv6 in brackets', () => {
    expect(parseAllowedHosts(' Parley.Example.org , 10.0.0.5:3000,[::1]:8080,localhost,')).toEqual([
      { name: 'parley.example.org', port: null },
      { name: '10.0.0.5', port: 3000 },
      { name: '[::1]', port: 8080 },
      { name: 'localhost', port: null },
    ]);
  });

  it('refuses anything else with a message naming the variable and the entry', () => {
    for (const bad of ['https://parley.example.org', 'parley.example.org/app', 'user@host', '*.example.org', 'host:0', 'host:65536', 'host:', '[nothex]', '::1', 'a b', '-lead.example']) {
      expect(() => parseAllowedHosts(bad), bad).toThrow(ConfigError);
      expect(() => parseAllowedHosts(bad), bad).toThrow(/ALLOWED_HOSTS .*host or host:port/);
      expect(() => readConfig({ ALLOWED_HOSTS: `ok.example,${bad}` }), bad).toThrow(`"${bad.trim()}"`);
    }
  });
});

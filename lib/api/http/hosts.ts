// Which Host a request may name. Without ASSET_URL, file_url is built on the request's own origin,
// so a Host header the operator did not allow would put signed URLs on any host a client (or a
// cache poisoner) likes. The rule is one function, used by every way a request arrives: npm start's
// node:http adapter, the Next route handlers (exchange.ts), and proxy mode.
//
// Decision: the check covers every /v1 request, not only those that build a file_url: a server
// reached through a name it does not know then says so on its first request, instead of
// answering conversations and failing only once files are involved.
import os from 'node:os';
import type { AllowedHost, Config } from '../../config';
import { ApiError } from '../errors';
import type { ApiRequest } from './exchange';

// What may stand in a URL's authority: a DNS name or IPv4 address, or a bracketed IPv6 address,
// then an optional port. Anything else (quotes, spaces, user@, paths) is refused, never cleaned.
const HOST_HEADER = /^([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i;

const WILDCARD_ADDRESSES = new Set(['0.0.0.0', '::', '[::]', '']);

export type HostConfig = Pick<Config, 'assetUrl' | 'allowedHosts' | 'hostname'>;

/** This machine's addresses; IPv6 link-local ones carry a zone (%eth0) no Host header can name. */
function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((info) => info.address.toLowerCase())
    .filter((address) => !address.includes('%'));
}

const hostError = (message: string) => new ApiError('parameter_invalid', message, 'Host');

export class HostPolicy {
  /** Explicit ALLOWED_HOSTS, or null for the default: these names on the server's own port. */
  private readonly allowed: AllowedHost[] | null;
  private readonly defaultNames: Set<string>;

  constructor(private readonly config: HostConfig) {
    this.allowed = config.allowedHosts;
    // The loopback names, this machine's name, and the addresses the server listens on: the one
    // it was given, or — listening on all of them (0.0.0.0, the default) — this machine's own
    // interface addresses as they are at start, so a phone on the LAN can use http://<ip>:3000.
    // None of these can name another party's host.
    this.defaultNames = new Set(['localhost', '127.0.0.1', '[::1]', os.hostname().toLowerCase()]);
    const listen = config.hostname.toLowerCase();
    const addresses = WILDCARD_ADDRESSES.has(listen) ? interfaceAddresses() : [listen];
    for (const address of addresses) this.defaultNames.add(address.includes(':') && !address.startsWith('[') ? `[${address}]` : address);
  }

  /**
   * The origin file_urls are built on: ASSET_URL when set (the Host is then not used at all),
   * else the request's scheme and Host — when that Host is allowed. Otherwise 400, param Host.
   */
  assetBase(request: ApiRequest): string {
    if (this.config.assetUrl) return this.config.assetUrl;
    const raw = request.host;
    const match = raw === null ? null : HOST_HEADER.exec(raw);
    const port = match?.[2] === undefined ? (request.scheme === 'https' ? 443 : 80) : Number(match[2]);
    if (!match || port < 1 || port > 65535) {
      throw hostError('The Host header is missing or malformed; it must name a host this server allows (ALLOWED_HOSTS)');
    }
    const name = match[1].toLowerCase();
    if (!this.allows(name, port, request.localPort)) {
      throw hostError(
        `Host "${raw}" is not allowed for this server: add it to ALLOWED_HOSTS (a comma list of host or host:port), or set ASSET_URL`,
      );
    }
    return `${request.scheme}://${name}${match[2] === undefined ? '' : `:${port}`}`;
  }

  /** The same rule, for requests that build no URL: throws what assetBase would. */
  check(request: ApiRequest): void {
    this.assetBase(request);
  }

  private allows(name: string, port: number, localPort: number | null): boolean {
    if (this.allowed === null) return this.defaultNames.has(name) && port === localPort;
    return this.allowed.some((host) => host.name === name && (host.port === null || host.port === port));
  }
}

import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go (WEBHOOK_ALLOWED_HOSTS): exact host names or addresses, `*.example.com`
 * (any subdomain), or `*` (any host). A host that is (or resolves to) a loopback, private,
 * link-local or otherwise non-public address is allowed only when listed exactly: a wildcard
 * never reaches the server's own network. Empty: webhooks are off.
 */
export class WebhookDestinations {
  private readonly exact: Set<string>;
  private readonly suffixes: string[];
  private readonly anyHost: boolean;

  constructor(readonly hosts: readonly string[]) {
    const names = hosts.map(hostOf);
    this.exact = new Set(names.filter((h) => !h.startsWith('*')));
    this.suffixes = names.filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
    this.anyHost = names.includes('*');
  }

  /** From a WEBHOOK_ALLOWED_HOSTS value (comma-separated); unset or empty: none. */
  static parse(spec: string | undefined): WebhookDestinations {
    return new WebhookDestinations(
      (spec ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    );
  }

  get enabled(): boolean {
    return this.hosts.length > 0;
  }

  /** Why `raw` may not be a run's webhook, or undefined when it may. Resolves no name (the send checks the addresses). */
  problem(raw: string): string | undefined {
    if (!this.enabled) return 'webhooks are off on this server (no allowed destinations: WEBHOOK_ALLOWED_HOSTS is unset)';
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'must be an absolute http:// or https:// URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http:// or https:// URL';
    const host = hostOf(url.hostname);
    if (this.exact.has(host)) return undefined;
    if (!this.anyHost && !this.suffixes.some((s) => host.endsWith(s))) return `host "${host}" is not an allowed webhook destination`;
    if (ipaddr.isValid(host) ? !isPublic(host) : host === 'localhost' || host.endsWith('.localhost'))
      return `host "${host}" is a loopback or private address, allowed only when WEBHOOK_ALLOWED_HOSTS lists it`;
    return undefined;
  }

  /**
   * A `lookup` for the request that sends to `host`: it resolves the name and refuses any
   * non-public address unless the host is listed exactly, so the address checked is the address
   * connected to (a name that changes its answer between admission and send is caught here).
   */
  lookupFor(host: string): LookupFunction {
    const trusted = this.exact.has(hostOf(host));
    return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
      dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err);
        const refused = trusted ? undefined : addresses.find((a) => !isPublic(a.address));
        if (refused)
          return callback(new Error(`${hostname} resolves to ${refused.address}, a loopback or private address (not listed in WEBHOOK_ALLOWED_HOSTS)`));
        if (options.all) return callback(null, addresses);
        const [first] = addresses;
        if (!first) return callback(new Error(`${hostname} has no address`));
        callback(null, first.address, first.family);
      });
    }) as LookupFunction;
  }

  /** Checked at send time for a URL whose host is an address (no lookup runs for those). */
  addressProblem(host: string): string | undefined {
    const name = hostOf(host);
    if (!ipaddr.isValid(name) || this.exact.has(name) || isPublic(name)) return undefined;
    return `${name} is a loopback or private address (not listed in WEBHOOK_ALLOWED_HOSTS)`;
  }
}

/** A host as compared: lowercased, an IPv6 literal without its brackets. */
function hostOf(host: string): string {
  const h = host.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** True for a public unicast address; IPv4-mapped IPv6 addresses are judged as the IPv4 address. */
export function isPublic(address: string): boolean {
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}

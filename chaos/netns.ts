// Hosts apart (`npm run chaos -- --hosts-apart`): the producer and each worker slot in a network
// namespace of its own, joined to the harness's namespace by a veth pair, so every byte between
// them and PostgreSQL or Redis crosses a network interface instead of loopback. Needs root (`ip netns`).
// The links' delay and loss stand in the harness's proxies (LinkProxy.condition): this kernel has
// no netem qdisc (`tc qdisc add … netem` answers "Specified qdisc kind is unknown").
import { execFileSync } from 'node:child_process';

/** One process's host: its namespace, and the addresses of its end and of the harness's end. */
export interface Host {
  ns: string;
  /** The process's own address (the producer listens on it). */
  ip: string;
  /** The harness's end of the link (its proxies listen on it). */
  gatewayIp: string;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** True when this process may make namespaces (root with iproute2). */
export function canMakeNamespaces(): boolean {
  try {
    ip('netns', 'add', 'rlc-probe');
    ip('netns', 'del', 'rlc-probe');
    return true;
  } catch {
    return false;
  }
}

export class HostsApart {
  private readonly hosts = new Map<string, Host>();

  /** `tag` keeps two runs' namespaces apart (a few letters of the seed). */
  constructor(private readonly tag: string) {}

  /** The host of `name` (a worker slot or `producer`), made on first use. */
  host(name: string): Host {
    let host = this.hosts.get(name);
    if (host) return host;
    const i = this.hosts.size + 1;
    if (i > 250) throw new Error('hosts apart: more than 250 hosts');
    const ns = `rlc-${this.tag}-${i}`;
    // Interface names: at most 15 characters.
    const outer = `rlc${this.tag}h${i}`.slice(0, 15);
    const inner = `rlc${this.tag}n${i}`.slice(0, 15);
    host = { ns, ip: `10.213.${i}.2`, gatewayIp: `10.213.${i}.1` };
    ip('netns', 'add', ns);
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    ip('link', 'set', inner, 'netns', ns);
    ip('addr', 'add', `${host.gatewayIp}/30`, 'dev', outer);
    ip('link', 'set', outer, 'up');
    ip('-n', ns, 'addr', 'add', `${host.ip}/30`, 'dev', inner);
    ip('-n', ns, 'link', 'set', inner, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'route', 'add', 'default', 'via', host.gatewayIp);
    this.hosts.set(name, host);
    return host;
  }

  /** The command prefix that runs a program on `name`'s host. */
  prefix(name: string): string[] {
    return ['ip', 'netns', 'exec', this.host(name).ns];
  }

  /** Deletes every namespace (their veth pairs go with them). Safe to call twice. */
  remove(): void {
    for (const { ns } of this.hosts.values()) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // Already gone.
      }
    }
    this.hosts.clear();
  }
}

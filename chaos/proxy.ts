// A TCP proxy for one link (a worker to PostgreSQL or to Redis) that the chaos harness can
// slow down or cut, on Node's net module: a proxy library would add a dependency for the
// forty lines that matter here (latency in order, dropping bytes, resetting cut connections).
import net from 'node:net';

/** Which bytes a cut drops: `both` is a partition, `up` drops client → server, `down` server → client. */
export type Cut = 'none' | 'both' | 'up' | 'down';

interface Link {
  client: net.Socket;
  server: net.Socket;
  /** Bytes were dropped: the protocol stream is broken, so the connection dies on heal. */
  broken: boolean;
}

/**
 * A link's standing condition between hosts apart (`--hosts-apart`): each chunk `baseMs` ± `jitterMs`
 * late, in order, and `retransmitShare` of chunks a further `retransmitMs` late, as TCP delivers a
 * segment that was lost once (this kernel has no netem, so loss is shown by its cost, not by drops).
 */
export interface LinkCondition {
  baseMs: number;
  jitterMs: number;
  retransmitShare: number;
  retransmitMs: number;
}

export class LinkProxy {
  /** Extra latency of a link_latency fault, on top of the standing condition. */
  latencyMs = 0;
  condition: LinkCondition = { baseMs: 0, jitterMs: 0, retransmitShare: 0, retransmitMs: 0 };
  private cut: Cut = 'none';
  private readonly links = new Set<Link>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  /** Listens on a free port of `host` (default 127.0.0.1) and forwards every connection to `targetPort` of 127.0.0.1. */
  static async start(targetPort: number, host = '127.0.0.1'): Promise<LinkProxy> {
    let proxy: LinkProxy | undefined;
    const server = net.createServer((client) => proxy?.accept(client, targetPort));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
    proxy = new LinkProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  get state(): Cut {
    return this.cut;
  }

  /** Drops bytes in `cut`'s direction(s) from now on, on open connections and new ones alike. */
  partition(cut: Exclude<Cut, 'none'>): void {
    this.cut = cut;
  }

  /**
   * Ends the cut. Connections that lost bytes are reset, as TCP ends them once its retransmissions
   * give up; clients reconnect. Nothing dropped is delivered late.
   */
  heal(): void {
    this.cut = 'none';
    for (const link of this.links) if (link.broken) this.reset(link);
  }

  async close(): Promise<void> {
    for (const link of this.links) this.reset(link);
    await new Promise((r) => this.server.close(r));
  }

  private accept(client: net.Socket, targetPort: number): void {
    const server = net.connect(targetPort, '127.0.0.1');
    const link: Link = { client, server, broken: false };
    this.links.add(link);
    this.forward(link, client, server, 'up');
    this.forward(link, server, client, 'down');
    // A close on one side ends the other gracefully; only a heal resets (see `heal`).
    for (const s of [client, server]) {
      s.on('error', () => this.drop(link));
      s.on('close', () => this.drop(link));
    }
  }

  /** How late the next chunk goes: the fault's latency plus the standing condition's. */
  private delayMs(): number {
    const c = this.condition;
    const jitter = c.jitterMs > 0 ? (Math.random() * 2 - 1) * c.jitterMs : 0;
    const resent = c.retransmitShare > 0 && Math.random() < c.retransmitShare ? c.retransmitMs : 0;
    return this.latencyMs + Math.max(0, c.baseMs + jitter) + resent;
  }

  /** Copies `from` to `to` in order, each chunk `delayMs()` late, dropping it while `direction` is cut. */
  private forward(link: Link, from: net.Socket, to: net.Socket, direction: 'up' | 'down'): void {
    let lastDue = 0;
    const later = (fn: () => void) => {
      const due = Math.max(Date.now() + this.delayMs(), lastDue);
      lastDue = due;
      if (due <= Date.now()) fn();
      else setTimeout(fn, due - Date.now());
    };
    from.on('data', (chunk: Buffer) => {
      if (this.cut === 'both' || this.cut === direction) {
        link.broken = true;
        return;
      }
      later(() => {
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('end', () => later(() => to.end()));
  }

  /** Forgets a link one side of which closed or failed, and closes the other side. */
  private drop(link: Link): void {
    if (!this.links.delete(link)) return;
    for (const s of [link.client, link.server]) if (!s.destroyed) s.end(() => s.destroy());
  }

  private reset(link: Link): void {
    if (!this.links.delete(link)) return;
    for (const s of [link.client, link.server]) {
      if (s.connecting || s.destroyed) s.destroy();
      else s.resetAndDestroy();
    }
  }
}

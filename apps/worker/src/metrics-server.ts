import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** The port it listens on (useful with port 0). */
  port: number;
  /** The address it listens on. */
  host: string;
  close(): Promise<void>;
}

/**
 * Serves `registry` at GET /metrics in Prometheus' text format on its own port (METRICS_PORT),
 * apart from any other traffic, on `host` (default 127.0.0.1: the port has no credentials).
 * Resolves once listening; rejects when the port is taken.
 */
export function startMetricsServer(registry: Registry, port: number, host = '127.0.0.1'): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        host: (server.address() as AddressInfo).address,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

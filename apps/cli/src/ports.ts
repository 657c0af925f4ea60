import net from 'node:net';

/** True when a server could listen on host:port right now (nothing else holds it). */
export function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Polls `url` until it answers 200 or `timeoutMs` passes; `stop()` returning true gives up early. */
export async function waitForOk(url: string, timeoutMs: number, stop: () => boolean): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end && !stop()) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

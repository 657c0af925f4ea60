import { connect } from 'node:net';

/**
 * Writes `text` as raw bytes on a fresh connection to 127.0.0.1:`port` and returns everything the
 * server sent before it closed the connection: for requests fetch will not send (credentials in
 * the URL, a wrong Content-Length, half a request).
 */
export function rawExchange(port: number, text: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('connect', () => socket.write(text));
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    setTimeout(() => reject(new Error(`no close within ${timeoutMs} ms; got: ${out.slice(0, 300)}`)), timeoutMs).unref();
  });
}

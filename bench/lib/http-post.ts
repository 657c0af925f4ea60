// The load generator's HTTP client: node:http with a keep-alive agent. Node's global fetch (undici
// behind WHATWG streams) cost the bench process 0.9–2.2 ms of CPU per small POST on this 2-core
// machine, against 0.27–0.49 ms for this client, and the server answering it spent more too
// (0.78–1.87 against 0.47–1.03 ms). On two cores the load generator shares the machine with what it
// measures, so its own cost would be charged to Runledger's throughput.
import { Agent, request } from 'node:http';

export interface Answer {
  status: number;
  body: string;
}

/** POSTs JSON bodies to one origin over at most `sockets` kept-alive connections. */
export function jsonPoster(origin: string, sockets: number) {
  const { hostname, port } = new URL(origin);
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const post = (path: string, json: string) =>
    new Promise<Answer>((resolve, reject) => {
      const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) };
      const req = request({ hostname, port, path, method: 'POST', agent, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(json);
    });
  return { post, close: () => agent.destroy() };
}

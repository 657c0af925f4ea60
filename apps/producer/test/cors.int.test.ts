// CORS per mode: a dev stack (npm start, runledger dev) lets a web app on this machine in on any
// port, as `langgraph dev` does; langgraph.json's `http.cors` is honoured in every mode;
// RUNLEDGER_CORS_ORIGINS wins over both; a production producer sends no CORS headers.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { createServer, type ProducerServer } from '../src/create-server';

let db: TestDb;
const servers: ProducerServer[] = [];
beforeAll(async () => {
  db = await testDb('cors');
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await db?.close();
});

const fixtureGraphs = path.join(import.meta.dirname, '../../worker/test/fixtures/langgraph-project/src/graphs.ts');

/** A langgraph.json with one graph and this `http` section. */
function project(http: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'runledger-cors-')), 'langgraph.json');
  writeFileSync(file, JSON.stringify({ graphs: { compiled: `${fixtureGraphs}:compiled` }, http }));
  return file;
}

async function producer(env: Record<string, string>, config?: string): Promise<string> {
  const server = await createServer({
    databaseUrl: db.url,
    port: 0,
    config,
    env: { DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres', LOG_LEVEL: 'silent', ...env },
  });
  servers.push(server);
  return server.listen();
}

/** The origin a preflight from `origin` is allowed as (null: refused), and the headers it may read. */
async function preflight(url: string, origin: string) {
  const r = await fetch(`${url}/threads/search`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' },
  });
  return r.headers.get('access-control-allow-origin');
}

describe('CORS by mode', () => {
  it('a dev stack (RUNLEDGER_DEV, set by npm start and runledger dev) allows any localhost or 127.0.0.1 origin, nothing else', async () => {
    const url = await producer({ RUNLEDGER_DEV: '1' });
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3001', 'http://localhost']) expect(await preflight(url, origin)).toBe(origin);
    for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'http://127.0.0.1.evil.example:80'])
      expect(await preflight(url, origin)).toBeNull();
    const created = await fetch(`${url}/threads`, {
      method: 'POST',
      headers: { origin: 'http://localhost:5173', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('access-control-expose-headers')).toContain('Content-Location');
  });

  it('production sends no CORS headers by default', async () => {
    const url = await producer({});
    expect(await preflight(url, 'http://localhost:5173')).toBeNull();
  });

  it("langgraph.json's http.cors is honoured in production and in dev, over the dev default; RUNLEDGER_CORS_ORIGINS wins over it", async () => {
    const config = project({ cors: { allow_origins: ['https://app.example.com'], expose_headers: ['X-Trace'], max_age: 60 } });
    const modes: Array<Record<string, string>> = [{}, { RUNLEDGER_DEV: '1' }];
    for (const env of modes) {
      const url = await producer(env, config);
      expect(await preflight(url, 'https://app.example.com')).toBe('https://app.example.com');
      expect(await preflight(url, 'http://localhost:5173')).toBeNull();
      const r = await fetch(`${url}/threads/search`, {
        method: 'POST',
        headers: { origin: 'https://app.example.com', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(
        r.headers
          .get('access-control-expose-headers')
          ?.split(',')
          .map((h) => h.trim()),
      ).toEqual(expect.arrayContaining(['Content-Location', 'X-Trace']));
    }
    const regex = await producer({}, project({ cors: { allow_origin_regex: '^https://[a-z]+\\.example\\.org$' } }));
    expect(await preflight(regex, 'https://tenant.example.org')).toBe('https://tenant.example.org');
    expect(await preflight(regex, 'https://app.example.com')).toBeNull();
    const env = await producer({ RUNLEDGER_CORS_ORIGINS: 'https://ops.example.net' }, config);
    expect(await preflight(env, 'https://ops.example.net')).toBe('https://ops.example.net');
    expect(await preflight(env, 'https://app.example.com')).toBeNull();
  });
});

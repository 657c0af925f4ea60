import { connect } from 'node:net';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseWorkerEnv } from '../src/config';
import { startMetricsServer } from '../src/metrics-server';

// The worker's /metrics has no credentials: it listens on the loopback address unless told otherwise.

const DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

describe('metrics listener address', () => {
  it('defaults METRICS_HOST to 127.0.0.1 and keeps an explicit 0.0.0.0', () => {
    const byDefault = parseWorkerEnv({ DATABASE_URL });
    expect(byDefault.ok && byDefault.env.METRICS_HOST).toBe('127.0.0.1');
    const exposed = parseWorkerEnv({ DATABASE_URL, METRICS_HOST: '0.0.0.0' });
    expect(exposed.ok && exposed.env.METRICS_HOST).toBe('0.0.0.0');
  });

  it('listens on 127.0.0.1 when no address is given, and answers there', async () => {
    const server = await startMetricsServer(new Registry(), 0);
    try {
      expect(server.host).toBe('127.0.0.1');
      const reached = await new Promise<boolean>((resolve) => {
        const socket = connect(server.port, '127.0.0.1', () => {
          socket.end();
          resolve(true);
        });
        socket.on('error', () => resolve(false));
      });
      expect(reached).toBe(true);
    } finally {
      await server.close();
    }
  });
});

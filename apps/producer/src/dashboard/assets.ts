import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const here = path.dirname(new URL(import.meta.url).pathname);
// Chart.js from node_modules (no CDN: the dashboard must work on a closed network).
const chartDir = path.dirname(createRequire(import.meta.url).resolve('chart.js'));

/** The files under /admin/static/: name → where it lives and its content type. */
const FILES: Record<string, { file: string; type: string }> = {
  'dashboard.css': { file: path.join(here, 'assets', 'dashboard.css'), type: 'text/css; charset=utf-8' },
  'dashboard.js': { file: path.join(here, 'assets', 'dashboard.js'), type: 'text/javascript; charset=utf-8' },
  'chart.umd.min.js': { file: path.join(chartDir, 'chart.umd.min.js'), type: 'text/javascript; charset=utf-8' },
};

/** Serves the dashboard's stylesheet and scripts (read once, then kept in memory). */
export async function dashboardAssets(app: FastifyInstance): Promise<void> {
  const cache = new Map<string, Buffer>();
  app.get('/admin/static/:name', { schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const entry = FILES[name];
    if (!entry) return reply.code(404).send({ error: { code: 'not_found', message: `No dashboard asset ${name}.` } });
    let body = cache.get(name);
    if (!body) {
      body = await readFile(entry.file);
      cache.set(name, body);
    }
    return reply.type(entry.type).header('cache-control', 'public, max-age=300').send(body);
  });
}

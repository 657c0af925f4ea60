import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { backends, type Harness, startHarness } from './harness';

describe('OpenAPI document and its UI', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('docs');
  });
  afterAll(() => h?.close());

  it('describes every /v1 route from the same schemas that validate requests', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(r.statusCode).toBe(200);
    const doc = r.json();
    expect(doc.openapi).toBe('3.1.0');
    const paths = Object.keys(doc.paths);
    // The LangGraph Server API's routes are listed too, under their own tag.
    const langgraph = paths.filter((p) => /^\/(assistants|threads|runs|store|mcp)\b/.test(p));
    expect(langgraph).toEqual(
      expect.arrayContaining(['/threads/{thread_id}/state', '/threads/{thread_id}/runs/stream', '/runs/{run_id}/join', '/assistants/search', '/store/items']),
    );
    expect(doc.paths['/threads/{thread_id}/runs'].post.tags).toEqual(['langgraph']);
    // /mcp is MCP's JSON-RPC, with its own envelope: served, not described here.
    expect(paths).not.toContain('/mcp');
    expect(doc.paths['/threads/{thread_id}/state'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('as_node');
    expect(paths.filter((p) => !langgraph.includes(p)).sort()).toEqual([
      '/healthz',
      '/info',
      '/ok',
      '/readyz',
      '/v1/crons',
      '/v1/crons/{cronId}',
      '/v1/jobs',
      '/v1/jobs/batch',
      '/v1/jobs/{jobId}',
      '/v1/jobs/{jobId}/cancel',
      '/v1/jobs/{jobId}/events',
      '/v1/jobs/{jobId}/replay',
      '/v1/jobs/{jobId}/resolve',
      '/v1/jobs/{jobId}/resume',
      '/v1/jobs/{jobId}/upgrade',
      '/v1/threads/{threadId}/state',
      '/v1/webhooks/secret',
    ]);
    const submit = doc.paths['/v1/jobs'].post;
    const body = submit.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['graph', 'input']));
    expect(body.properties.multitask.enum).toEqual(['enqueue', 'reject']);
    expect(Object.keys(submit.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '409', '413', '415', '422', '503']));
    expect(submit.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key' })]));
  });

  it('documents the batch route: its limit, each item shaped like POST /v1/jobs, and 200 with one answer per job', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const batch = doc.paths['/v1/jobs/batch'].post;
    const jobs = batch.requestBody.content['application/json'].schema.properties.jobs;
    expect(jobs).toMatchObject({ maxItems: 500, minItems: 1 });
    expect(jobs.items.required).toEqual(expect.arrayContaining(['graph', 'input']));
    expect(jobs.items.properties.multitask.enum).toEqual(['enqueue', 'reject']);
    expect(batch.description).toContain('answers 200 with one result per job');
    const result = batch.responses['200'].content['application/json'].schema.properties.results.items;
    expect(result.required).toEqual(['status', 'body']);
  });

  it('documents both ways to send a key, and the public probes', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(doc.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(doc.paths['/readyz'].get.security).toEqual([]);
    expect(doc.info.description).toContain('431 headers_too_large');
  });

  it('serves Swagger UI at /docs', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/docs/' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/html');
  });

  it('GET / sends an API client to /docs and a browser to the dashboard (auth off: /admin is open)', async () => {
    const api = await h.app.inject({ method: 'GET', url: '/' });
    expect(api.statusCode).toBe(302);
    expect(api.headers.location).toBe('/docs');
    const browser = await h.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.statusCode).toBe(302);
    expect(browser.headers.location).toBe('/admin');
  });

  it('leaves /admin itself to the ledger dashboard', async () => {
    const r = await h.app.inject({ method: 'GET', url: '/admin' });
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('<h1>Jobs</h1>');
  });
});

describe.each(backends())('Bull Board on the %s queue', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(`board_${backend}`, { backend });
  });
  afterAll(() => h?.close());

  it('serves the board and links each queue job to its ledger view', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/admin/queues' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const { jobId } = (await h.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} } })).json();
    // On a loaded machine the admission may answer before its queue add lands (enqueue timeout).
    await waitFor('the delivery to reach the queue', async () => ((await h.queue.getJobState(jobId)) === 'waiting' ? true : undefined));
    const api = await h.app.inject({ method: 'GET', url: '/admin/queues/api/queues?activeQueue=runledger&status=waiting&page=1&jobsPerPage=50' });
    expect(api.statusCode).toBe(200);
    const queue = api.json().queues.find((q: { name: string }) => q.name === 'runledger');
    const job = queue.jobs.find((j: { id: string }) => j.id === jobId);
    expect(job.name).toBe('echo');
    expect(job.data).toEqual({ jobId, graph: 'echo', threadId: jobId, tenant: 'default', attempt: 0, delivery: 0 });
    expect(job.externalUrl).toEqual({ href: `/admin/jobs/${jobId}`, displayText: `Ledger: ${jobId}` });
    const ledgerPage = await h.app.inject({ method: 'GET', url: job.externalUrl.href });
    expect(ledgerPage.statusCode).toBe(200);
    expect(ledgerPage.body).toContain(jobId);
  });
});

// /mcp driven by the official MCP SDK's client over the streamable HTTP transport: assistants are
// tools, a tool call is a Runledger run (a job of the caller's tenant) that survives a worker
// SIGKILL, and the endpoint takes the same keys as the rest of the API.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { KEYS, type LangGraphStack, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
beforeAll(async () => {
  s = await startLangGraphStack('lg_mcp');
});
afterAll(() => s?.close());

async function mcpClient(key?: string): Promise<Client> {
  const client = new Client({ name: 'runledger-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { 'x-api-key': key } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers } }));
  return client;
}

describe('MCP through the official SDK client', () => {
  it('lists every assistant as a tool with an object input schema', async () => {
    const client = await mcpClient(KEYS.acme);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['approval', 'chat', 'echo', 'vacation']);
    const echo = tools.find((t) => t.name === 'echo');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { steps: {} } });
    await client.close();
  });

  it("lists a tenant's stored assistants by name, to that tenant only, and runs them as that assistant", async () => {
    const stored = await s.client(KEYS.acme).assistants.create({ graphId: 'echo', name: 'echo_twice', config: { configurable: { note: 'x' } } });
    const acme = await mcpClient(KEYS.acme);
    expect((await acme.listTools()).tools.map((t) => t.name)).toContain('echo_twice');
    const globex = await mcpClient(KEYS.globex);
    expect((await globex.listTools()).tools.map((t) => t.name)).not.toContain('echo_twice');
    s.worker('lg-mcp-w0');
    const result = (await acme.callTool({ name: 'echo_twice', arguments: { steps: 2 } })) as { content: Array<{ text: string }> };
    expect(JSON.parse(result.content[0]?.text ?? 'null')).toMatchObject({ done: 2 });
    const row = (await s.db.ledger.list({ tenant: 'acme', graph: 'echo' })).jobs[0];
    expect(row?.metadata).toMatchObject({ runledger_assistant: { assistant_id: stored.assistant_id, version: 1 } });
    await acme.close();
    await globex.close();
  });

  it("calls a tool as a run of the caller's tenant, which survives a worker SIGKILL", async () => {
    await s.procs.cleanup({ task: { result: { state: 'pass' } } });
    const w1 = s.worker('lg-mcp-w1');
    const client = await mcpClient(KEYS.acme);
    const call = client.callTool({ name: 'echo', arguments: { steps: 2, sleepMs: 4_000 } }, undefined, { timeout: 120_000 });
    const job = await waitFor('the tool call running', async () => {
      const r = await s.db.ledger.pool.query("SELECT job_id, tenant FROM jobs WHERE graph = 'echo' AND status = 'running'");
      return r.rows[0] as { job_id: string; tenant: string } | undefined;
    });
    expect(job.tenant).toBe('acme');
    w1.kill('SIGKILL');
    await w1.exited;
    s.worker('lg-mcp-w2');
    const result = (await call) as { isError?: boolean; content: Array<{ type: string; text: string }> };
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.content[0]?.text ?? 'null')).toMatchObject({ done: 2 });
    const row = (await s.db.ledger.pool.query('SELECT status, attempt FROM jobs WHERE job_id = $1', [job.job_id])).rows[0];
    expect(row).toMatchObject({ status: 'completed', attempt: 2 });
    await client.close();
  }, 120_000);

  it('refuses a caller without a key, and answers an unknown tool with an error', async () => {
    await expect(mcpClient()).rejects.toThrow(/unauthorized/);
    const client = await mcpClient(KEYS.globex);
    await expect(client.callTool({ name: 'no_such_graph', arguments: {} })).rejects.toThrow(/No tool \(assistant\) named "no_such_graph"/);
    const refused = await client.callTool({ name: 'echo', arguments: { steps: 'many' } }).catch((err: Error) => err);
    expect(String(refused instanceof Error ? refused.message : JSON.stringify(refused))).toMatch(/steps/);
    await client.close();
  });
});

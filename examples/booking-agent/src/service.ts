// A backend service in another repository: it only submits runs and reads their outcome, so
// it installs @runledger/client alone (no database driver, no LangGraph). Usage:
//   RUNLEDGER_URL=http://127.0.0.1:3000 node build/service.js "a table for 4 at Chez Ada"
import { RunledgerClient } from '@runledger/client';

const client = new RunledgerClient({ baseUrl: process.env.RUNLEDGER_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.RUNLEDGER_API_KEY });
const request = process.argv[2] ?? 'Book a table for 2 at Chez Ada';

const admission = await client.submit({ graph: 'agent', input: { messages: [{ role: 'user', content: request }] } });
console.log(`submitted ${admission.jobId}`);
const job = await client.wait(admission.jobId, { timeoutMs: 120_000 });
const messages = (job.result as { messages?: Array<{ kwargs?: { content?: unknown }; content?: unknown }> } | null)?.messages ?? [];
const last = messages.at(-1);
console.log(`${job.status} after ${job.attempt} attempt(s): ${String(last?.kwargs?.content ?? last?.content ?? '')}`);
process.exit(job.status === 'completed' ? 0 : 1);

import { randomUUID } from 'node:crypto';
import type { CheckpointMetadata, CheckpointTuple } from '@langchain/langgraph';
import { type LangGraphThread, langGraphThreadId } from '@runledger/ledger';
import { ApiError } from '../http-errors';
import type { LangGraphDeps } from './context';

/**
 * Copies a thread (`POST /threads/:id/copy`), as LangGraph's server does: a new thread of the same
 * tenant with the same metadata (and `thread_id` set to the new id), and every checkpoint of the
 * source, oldest first, with its pending writes. The copies go through the saver, so sealed values
 * are sealed again for the new thread's rows (they are bound to their thread). A copy that fails
 * part-way deletes the new thread. Answers the new thread.
 */
export async function copyThread(d: LangGraphDeps, source: LangGraphThread): Promise<LangGraphThread> {
  const threadId = randomUUID();
  const copy = await d.threads.create(threadId, source.tenant, { ...source.metadata, thread_id: threadId });
  if (!copy) throw new ApiError(503, 'retry', 'A new thread id collided; retry the request.');
  const from = { configurable: { thread_id: langGraphThreadId(source.tenant, source.threadId) } };
  const to = langGraphThreadId(copy.tenant, copy.threadId);
  try {
    await d.threads.writeState(copy.threadId, copy.tenant, d.schema, async (saver) => {
      const tuples: CheckpointTuple[] = [];
      for await (const t of saver.list(from)) tuples.push(t);
      for (const t of tuples.reverse()) {
        const ns = (t.config.configurable?.checkpoint_ns as string | undefined) ?? '';
        const parent = t.parentConfig?.configurable?.checkpoint_id as string | undefined;
        const config = { configurable: { thread_id: to, checkpoint_ns: ns, ...(parent ? { checkpoint_id: parent } : {}) } };
        const written = await saver.put(config, t.checkpoint, t.metadata as CheckpointMetadata, t.checkpoint.channel_versions);
        const byTask = new Map<string, Array<[string, unknown]>>();
        for (const [task, channel, value] of t.pendingWrites ?? []) byTask.set(task, [...(byTask.get(task) ?? []), [channel, value]]);
        for (const [task, writes] of byTask) await saver.putWrites(written, writes, task);
      }
    });
  } catch (err) {
    await d.threads.delete(copy.threadId, copy.tenant);
    throw err;
  }
  return (await d.threads.get(copy.threadId, copy.tenant)) ?? copy;
}

// The checkpoint fixtures of the saver tests: metadata, a one-channel checkpoint and the config
// that addresses a thread (and optionally one checkpoint) in the root namespace.
import { type Checkpoint, type CheckpointMetadata, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';

export const META: CheckpointMetadata = { source: 'input', step: -1, parents: {} };

/** A new checkpoint whose `messages` channel (version 1) holds `messages`. */
export const checkpoint = (messages: unknown[] = ['hi']): Checkpoint => ({
  ...emptyCheckpoint(),
  id: uuid6(-1),
  channel_values: { messages },
  channel_versions: { messages: 1 },
});

export const cfg = (threadId: string, checkpointId?: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: checkpointId } });

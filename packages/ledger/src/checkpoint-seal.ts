// How a sealed checkpoint value is typed and bound, without LangChain (the re-seal in the CLI's
// `core` entry uses it). checkpoint-serde.ts seals and opens with it.

/** Type prefix of a sealed checkpoint value of the older format: `sealed:<LangGraph's type>`, bound to no row. */
const SEALED = 'sealed:';
/** Type prefix of a sealed checkpoint value bound to its row: `sealed:row:<LangGraph's type>`. */
const SEALED_ROW = 'sealed:row:';

/** True for the type of a sealed checkpoint value (either format). */
export const isSealedType = (type: string): boolean => type.startsWith(SEALED);
/** True for a sealed checkpoint value of the older format, whose associated data names no row. */
export const isUnboundSealedType = (type: string): boolean => isSealedType(type) && !type.startsWith(SEALED_ROW);
/** LangGraph's own type of a checkpoint value, sealed or not. */
export const innerType = (type: string): string =>
  type.startsWith(SEALED_ROW) ? type.slice(SEALED_ROW.length) : isSealedType(type) ? type.slice(SEALED.length) : type;
/** The stored type of a value of LangGraph type `type` sealed bound to its row. */
export const rowBoundType = (type: string): string => `${SEALED_ROW}${type}`;
/** The stored type of a value sealed in the older unbound format. */
export const unboundType = (type: string): string => `${SEALED}${type}`;

/** Associated data of the older, unbound format (every blob and write alike). */
export const UNBOUND_CONTEXT = 'checkpoint';

/** The associated data binding a checkpoint value to its row (and so to its thread, namespace and checkpoint). */
export const checkpointContext = {
  /** A channel value: checkpoint_blobs' key. */
  blob: (threadId: string, ns: string, channel: string, version: string) => `checkpoint_blobs.blob:${JSON.stringify([threadId, ns, channel, version])}`,
  /** A pending write: checkpoint_writes' key. */
  write: (threadId: string, ns: string, checkpointId: string, taskId: string, idx: number) =>
    `checkpoint_writes.blob:${JSON.stringify([threadId, ns, checkpointId, taskId, idx])}`,
};

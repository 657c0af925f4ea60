export { abortableSleep, type RunContext, runContext, traceNode } from './context';
export { EffectInDoubtError, type EffectOptions, effect, effectIdempotencyKey, type Reconciliation, toolEffectKey } from './effect';
export { ScriptedVacationModel } from './graphs/vacation-model';
export type { BookingConfirmation, BookingOptions } from './graphs/vacation-tools';
export { builtInGraphs, type GraphDefinition, type GraphRegistry, loadGraphs, type RunnableGraph } from './registry';
export {
  graphStreamModes,
  STREAM_MODES,
  STREAM_REQUEST_KEY,
  StreamEventMapper,
  type StreamMode,
  type StreamRequest,
  serializeChunk,
  streamRequestOf,
} from './stream-modes';

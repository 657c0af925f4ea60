export { abortableSleep, type RunContext, type RunLedger, runContext, traceNode } from './context';
export { type CustomAuth, type CustomAuthHandler, loadCustomAuth } from './custom-auth';
export { EffectInDoubtError, type EffectOptions, effect, effectIdempotencyKey, type Reconciliation, toolEffectKey } from './effect';
export { type ToolEffectOptions, toolEffect } from './effect-tool';
export { definitionFromExport, inputCheck, type Notice } from './graph-export';
export { ScriptedVacationModel } from './graphs/vacation-model';
export type { BookingConfirmation, BookingOptions } from './graphs/vacation-tools';
export {
  applyProjectEnv,
  findLangGraphConfig,
  type GraphEntry,
  type LangGraphCors,
  type LangGraphProject,
  type LangGraphStore,
  readLangGraphConfig,
} from './langgraph-config';
export { ensurePlatformLogger, type GraphLogLevel, type GraphLogWrite, registerPlatformLogger, writeToStderr } from './platform-logger';
export {
  builtInGraphs,
  type GraphDefinition,
  type GraphRegistry,
  type InputCheckOptions,
  type LoadGraphsOptions,
  loadGraphs,
  type RunnableGraph,
} from './registry';
export {
  type ConfigLayer,
  type GraphConfigDefaults,
  invokeOptionsOf,
  mergeRunConfig,
  parseGraphConfigDefaults,
  type RunConfig,
  runConfigProblem,
} from './run-config';
export { breakpointsOf, commandOf, forkOf, type GotoTarget, RUN_REQUEST_KEY, type RunCommand, type RunRequest, runRequestOf } from './run-request';
export { loadStoreConfig, type StoreConfig } from './store-config';
export {
  clientChunk,
  graphStreamModes,
  STREAM_MODES,
  STREAM_REQUEST_KEY,
  StreamEventMapper,
  type StreamMode,
  type StreamRequest,
  serializeChunk,
  streamRequestOf,
} from './stream-modes';

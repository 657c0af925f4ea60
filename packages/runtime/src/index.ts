export { abortableSleep, type RunContext, runContext, traceNode } from './context';
export { builtInGraphs, type GraphDefinition, type GraphRegistry, loadGraphs, type RunnableGraph } from './registry';

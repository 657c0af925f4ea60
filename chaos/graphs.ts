// The graphs a chaos worker serves (RUNLEDGER_GRAPHS): the built-in ones, versioned by the
// deployment (RUNLEDGER_BUILD_ID) and declaring, from CHAOS_RESUMES (comma-separated), the
// earlier versions whose checkpoints they may resume, so the deploy fault's operator can move
// jobs left on a retired version (`upgrade`) without a replay. The code of every version is the
// same; what the run checks is that no worker ran a step of a version it did not serve.
import { builtInGraphs, type GraphDefinition } from '../packages/runtime/src/index';

const resumes = (process.env.CHAOS_RESUMES ?? '').split(',').filter((v) => v !== '');

export const graphs: GraphDefinition[] = builtInGraphs.map((g) => (resumes.length > 0 ? { ...g, resumes } : g));

// The recovery decision as a table: one case per row of ARCHITECTURE.md's "Recovery decision"
// table (the row about a graph that cannot be built is decided before `decide`, at the attempt's
// build, and is covered by broken-graph.int.test.ts). `decide` is a pure function, so each row is
// a job, its pending effects and its thread's state, and the action the table names.
import type { StateSnapshot } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../../packages/ledger/src/index';
import { type Decision, decide } from '../src/recovery';

const base = {
  jobId: 'j1',
  tenant: 'default',
  graph: 'echo',
  threadId: 't1',
  status: 'running',
  attempt: 1,
  maxAttempts: 3,
  recoveryReason: null,
  resumeValue: null,
  firstCheckpointAt: null,
  error: null,
} as unknown as Job;

const job = (patch: Partial<Job>): Job => ({ ...base, ...patch });
const checkpointed = new Date('2026-12-04T00:00:00Z');
const task = (interrupts: unknown[] = []) => ({ id: 'task', name: 'node', interrupts: interrupts.map((value) => ({ value })) });
const state = (next: string[], tasks: ReturnType<typeof task>[]) => ({ values: {}, next, tasks, config: {}, metadata: {} }) as unknown as StateSnapshot;
const pending = [{ effectKey: 'book:1', name: 'book' }];

const rows: Array<[string, Job, typeof pending, StateSnapshot | undefined, Partial<Decision>]> = [
  ['attempt > max → failed (attempts_exhausted)', job({ attempt: 4 }), [], undefined, { action: 'fail' }],
  ['first attempt, no checkpoint → invoke(input) (started)', job({ attempt: 1 }), [], undefined, { action: 'start' }],
  [
    'later attempt, no checkpoint, no pending effect → replay the stored input',
    job({ attempt: 2, recoveryReason: 'lease_expired' }),
    [],
    undefined,
    { action: 'replay', reason: 'lease_expired' },
  ],
  [
    'no checkpoint, an effect pending → manual_reconcile',
    job({ attempt: 2, recoveryReason: 'lease_expired' }),
    pending,
    undefined,
    { action: 'manual', reason: 'effects_in_doubt_without_checkpoint' },
  ],
  [
    'resume requested, pending interrupts → invoke(Command({ resume }))',
    job({ firstCheckpointAt: checkpointed, resumeValue: { value: 'yes' } }),
    [],
    state(['review'], [task(['approve?'])]),
    { action: 'resume_command', resume: { value: 'yes' } },
  ],
  [
    'checkpoint with pending interrupts, no resume → park as interrupted',
    job({ firstCheckpointAt: checkpointed, attempt: 2 }),
    [],
    state(['review'], [task(['approve?'])]),
    { action: 'park', interrupts: ['approve?'] },
  ],
  [
    'checkpoint, next and tasks empty → completed with the final state (already_finished)',
    job({ firstCheckpointAt: checkpointed, attempt: 2 }),
    [],
    state([], []),
    { action: 'complete_finished' },
  ],
  [
    'checkpoint, tasks left with next empty (writes saved, not the checkpoint) → invoke(null) (resumed)',
    job({ firstCheckpointAt: checkpointed, attempt: 2, recoveryReason: 'lease_expired' }),
    [],
    state([], [task()]),
    { action: 'resume', reason: 'lease_expired' },
  ],
  [
    'checkpoint with next → invoke(null) (resumed)',
    job({ firstCheckpointAt: checkpointed, attempt: 2, recoveryReason: 'drained' }),
    [],
    state(['step2'], [task()]),
    { action: 'resume', reason: 'drained' },
  ],
];

describe('recovery decision: the table of ARCHITECTURE.md, row by row', () => {
  it.each(rows)('%s', (_row, j, effects, s, expected) => {
    expect(decide(j, effects, s)).toMatchObject(expected);
  });

  it('a pending effect does not stop a job that has its own checkpoint (it resumes; the effect settles on its key)', () => {
    expect(decide(job({ firstCheckpointAt: checkpointed, attempt: 2 }), pending, state(['step2'], [task()]))).toMatchObject({ action: 'resume' });
  });

  it('an earlier job checkpoint on the thread is not this job’s: without firstCheckpointAt the input is replayed', () => {
    expect(decide(job({ attempt: 2, recoveryReason: 'drained' }), [], state(['step2'], [task()]))).toMatchObject({ action: 'replay' });
  });
});

// The worker's pool setting (RUNLEDGER_WORKER_GRAPHS / --graphs): graphs with optional limits, and
// one readable start-up error for a malformed entry or a graph named twice.
import { expect, it } from 'vitest';
import { createWorker, WorkerStartError } from '../src/index';
import { parsePool } from '../src/pool';

it('reads graphs with optional limits', () => {
  expect([...parsePool(' echo , vacation:2 ,')]).toEqual([
    ['echo', undefined],
    ['vacation', 2],
  ]);
});

it('refuses a graph named twice, naming both entries, with or without limits', () => {
  expect(() => parsePool('echo,echo:2')).toThrow('RUNLEDGER_WORKER_GRAPHS: "echo" is named twice ("echo" and "echo:2"); name each graph once');
  expect(() => parsePool('vacation:1,echo,vacation:1')).toThrow('"vacation" is named twice ("vacation:1" and "vacation:1")');
});

it('a worker started with a duplicate fails at start with a configuration error (exit code 2), before connecting anywhere', async () => {
  const start = createWorker({ pool: 'echo,echo:2', databaseUrl: 'postgres://nobody@127.0.0.1:1/none', handleSignals: false }).run();
  await expect(start).rejects.toThrow(WorkerStartError);
  await expect(start).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('"echo" is named twice') });
});

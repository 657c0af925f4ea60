import type { GraphDefinition } from '../registry';

/** Placeholder until the effects issue lands its vacation agent (issue 5). */
export const vacationGraph: GraphDefinition = {
  name: 'vacation',
  description: 'Books flight, hotel and car in parallel through the effects ledger (offline scripted agent).',
  build() {
    throw new Error('vacation graph is not built yet');
  },
};

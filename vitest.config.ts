import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages export their built files; the "@runledger/source" condition (first in each export)
// makes tests load the TypeScript instead, so no build is needed and none goes stale. The rest is
// vitest's own default: Vite's server conditions without "module" (ESM builds Node cannot load).
export default defineConfig({
  ssr: { resolve: { conditions: ['@runledger/source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    globals: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    reporters: ['default'],
  },
});

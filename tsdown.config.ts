// Builds every package to ESM JavaScript with type declarations (dist/*.mjs, dist/*.d.mts), the
// files each package.json exports; `npm run build` builds all, a package's `prepack` itself alone
// (`-F <its dir>`, run from its directory: paths here are relative to this file). The repository
// runs and tests the TypeScript sources through the "source" export condition (tsx, vitest, tsc).
// Dependencies stay external (each package's package.json lists them); `onlyBundle: []` fails the
// build if a module of node_modules would be copied in, which means a missing dependency. The
// producer's playground script is the exception: a browser bundle (apps/producer/src/playground/bundle.ts)
// written after its build. Node >= 22.18 loads this file itself: its imports name their extensions.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defineConfig, type UserConfig } from 'tsdown';
import { bundlePlayground } from './apps/producer/src/playground/bundle.ts';

const pkg = (cwd: string, entry: Record<string, string>, extra: Partial<UserConfig> = {}): UserConfig => ({
  cwd,
  name: cwd,
  entry,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  fixedExtension: true,
  dts: true,
  clean: true,
  tsconfig: 'tsconfig.json',
  deps: { onlyBundle: [] },
  // The d.ts plugin takes most of the build; rolldown's note saying so is noise here.
  checks: { pluginTimings: false },
  ...extra,
});

export default defineConfig([
  pkg('packages/ledger', { index: 'src/index.ts', core: 'src/core.ts' }, { copy: [{ from: 'src/sql', to: 'dist' }] }),
  pkg('packages/queue', { index: 'src/index.ts' }),
  pkg('packages/telemetry', { index: 'src/index.ts' }),
  pkg('packages/runtime', { index: 'src/index.ts' }),
  pkg('packages/client', { index: 'src/index.ts', transaction: 'src/transaction.ts' }),
  pkg('apps/worker', { index: 'src/index.ts', main: 'src/main.ts' }),
  // The playground's browser script (React and the SDK bundled in) is written beside the build.
  pkg(
    'apps/producer',
    { index: 'src/index.ts', main: 'src/main.ts' },
    {
      copy: [
        { from: 'src/dashboard/assets', to: 'dist' },
        { from: 'src/playground/playground.css', to: 'dist' },
      ],
      onSuccess: async () => writeFile(path.join(import.meta.dirname, 'apps/producer/dist/playground.js'), await bundlePlayground()),
    },
  ),
  pkg(
    'apps/cli',
    { main: 'src/main.ts', start: 'src/start.ts', 'embedded-host': 'src/embedded-host.ts', 'parent-guard': 'src/parent-guard.ts' },
    { dts: false, banner: { js: '#!/usr/bin/env node' } },
  ),
]);

// Bundles the playground's browser code (client.tsx: React, the SDK's useStream) into one ES
// module with rolldown. `npm run build` writes it beside the built producer (dist/playground.js);
// a producer run from the TypeScript sources calls this on the page's first request instead.
import path from 'node:path';
import { build } from 'rolldown';

export const PLAYGROUND_SOURCE = path.join(import.meta.dirname, 'client.tsx');

/** The playground's script: minified, React in production mode. */
export async function bundlePlayground(): Promise<string> {
  const out = await build({
    input: PLAYGROUND_SOURCE,
    platform: 'browser',
    write: false,
    logLevel: 'warn',
    // The SDK's React files start with "use client" (a server-components marker), meaningless here.
    onLog: (level, log, handler) => (log.code === 'MODULE_LEVEL_DIRECTIVE' ? undefined : handler(level, log)),
    transform: { jsx: 'react-jsx', define: { 'process.env.NODE_ENV': '"production"' } },
    output: { format: 'esm', minify: true, codeSplitting: false },
  });
  const [chunk] = out.output;
  if (chunk?.type !== 'chunk') throw new Error('rolldown produced no playground script');
  return chunk.code;
}

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';

const here = import.meta.dirname;
// From the TypeScript sources, client.tsx sits beside this file and is bundled on the first
// request (then kept); from the built producer (dist/), `npm run build` wrote dist/playground.js
// (and copied playground.css there).
const fromSources = existsSync(path.join(here, 'client.tsx'));
const NOT_BUILT = fromSources
  ? 'The playground script could not be bundled from client.tsx (is rolldown installed? run npm install).'
  : 'The playground script is missing: run `npm run build` (it writes dist/playground.js).';

let script: Promise<string> | undefined;
function playgroundScript(): Promise<string> {
  script ??= (async () => {
    if (!fromSources) return readFile(path.join(here, 'playground.js'), 'utf8');
    // A path the producer's own bundler does not follow: rolldown is needed only here, in development.
    const bundler = (await import(pathToFileURL(path.join(here, 'bundle.ts')).href)) as typeof import('./bundle');
    return bundler.bundlePlayground();
  })();
  script.catch(() => {
    script = undefined;
  });
  return script;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Runledger playground</title>
<link rel="stylesheet" href="/playground/playground.css">
</head>
<body>
<div id="root"><noscript>The playground needs JavaScript.</noscript></div>
<script type="module" src="/playground/playground.js"></script>
</body>
</html>
`;

/**
 * The playground at /playground: a chat with a registered graph through the LangGraph SDK's
 * useStream, on this producer's own API. The page and its files are public; the API calls it
 * makes carry the key a person pastes (x-api-key), under the usual auth rules.
 */
export async function playgroundRoutes(app: FastifyInstance): Promise<void> {
  const hide = { schema: { hide: true } };
  app.get('/playground', hide, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/playground/playground.css', hide, async (_request, reply) =>
    reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(await readFile(path.join(here, 'playground.css'))),
  );
  app.get('/playground/playground.js', hide, async (request, reply) => {
    try {
      const body = await playgroundScript();
      return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(body);
    } catch (err) {
      request.log.error({ err }, 'playground script not available');
      return reply
        .code(503)
        .type('text/javascript; charset=utf-8')
        .send(`console.error(${JSON.stringify(NOT_BUILT)});`);
    }
  });
}

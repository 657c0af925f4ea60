// A module resolve hook for bin/runledger.mjs: in the repository a workspace package's exports
// point at its TypeScript sources (`src/core.ts`); this answers with the built file beside them
// (`dist/core.mjs`), which `npm run build` writes for every entry.
const SOURCE = /\/(apps|packages)\/([^/]+)\/src\/([^/]+)\.ts$/;

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const m = specifier.startsWith('@runledger/') ? SOURCE.exec(resolved.url) : null;
  if (!m) return resolved;
  return { ...resolved, url: resolved.url.replace(SOURCE, `/$1/$2/dist/$3.mjs`), format: 'module' };
}

// A module resolve hook (registered with `node --import`): any module that resolves into
// @langchain/* fails to load, so a process that imports an entry point proves that entry loads
// no LangChain code at start-up (dynamic imports taken later are not resolved, so not seen).
import { register } from 'node:module';

const hook = `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('/node_modules/@langchain/')) throw new Error('LangChain loaded: ' + specifier + ' from ' + context.parentURL);
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);

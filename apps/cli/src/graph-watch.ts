// `runledger dev` reloads the team's graphs when their files change, as `langgraph dev` does:
// a recursive fs.watch on the project directory, debounced, that names the file changed.
import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';

/** Source and config files whose change means new graph code (or new graph settings). */
const WATCHED = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx|json)$|(^|\/)\.env[^/]*$/;
/** Directories whose files are not the team's sources: dependencies, builds, Runledger's own data. */
const IGNORED = /(^|\/)(node_modules|\.git|\.runledger|dist|build|\.turbo)(\/|$)/;

/** Whether a change of `file` (relative to the project directory) should reload the graphs. */
export function reloadsGraphs(file: string): boolean {
  const normal = file.split(path.sep).join('/');
  return WATCHED.test(normal) && !IGNORED.test(normal);
}

/**
 * Calls `onChange(file)` (relative to `dir`) once changes settle for `debounceMs`, with the last
 * file that changed; returns the watcher (close it to stop).
 */
export function watchGraphFiles(dir: string, onChange: (file: string) => void, debounceMs = 300): FSWatcher {
  let timer: NodeJS.Timeout | undefined;
  let last = '';
  const watcher = watch(dir, { recursive: true }, (_event, file) => {
    if (!file || !reloadsGraphs(file)) return;
    last = file;
    clearTimeout(timer);
    timer = setTimeout(() => onChange(last), debounceMs);
  });
  watcher.unref();
  return watcher;
}

// Summarises V8 CPU profiles (`npm run bench -- --profile <module>` writes them to
// bench/results/profiles/, one per spawned process): self time by package or project directory,
// inclusive time by package (a package counted once per sampled stack: "time under pg"), and the
// hottest functions.
//   npx tsx bench/profile-summary.ts bench/results/profiles/CPU.<…>.cpuprofile [more …]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives: an npm package, a project directory, Node itself, or V8's own buckets. */
function owner(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1]!;
  const own = url.match(/\/(packages\/[^/]+|apps\/[^/]+|bench|test)\//);
  return own ? own[1]! : url;
}

function summarise(file: string, top = 15): void {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (const [i, id] of p.samples.entries()) self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, t] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    const o = owner(url, functionName);
    owners.set(o, (owners.get(o) ?? 0) + t);
    const key = `${functionName || '(anonymous)'}  ${o}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(key, (functions.get(key) ?? 0) + t);
  }
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, t] of self) {
    if (byId.get(id)?.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { url, functionName } = byId.get(cur)!.callFrame;
      const o = url ? owner(url, functionName) : undefined;
      if (o && o !== 'node internals' && !seen.has(o)) {
        seen.add(o);
        inclusive.set(o, (inclusive.get(o) ?? 0) + t);
      }
    }
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)} %`;
  console.log(`\n${file}\n  ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / total).toFixed(0)} % of the time)`);
  console.log('  self time by owner (share of busy time):');
  for (const [o, t] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(t)}  ${o}`);
  console.log('  inclusive time by package (share of busy time):');
  for (const [o, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(t)}  ${o}`);
  console.log('  hottest functions (self time):');
  for (const [f, t] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(t)}  ${f}`);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> …');
  process.exitCode = 2;
}
for (const f of files) summarise(f);

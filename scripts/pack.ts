// `npm run pack`: builds every package (tsdown.config.ts) and packs each with `npm pack` into
// .pack/*.tgz, ready for `npm install ./.pack/runledger-cli-0.1.0.tgz …` or `npm publish`.
// In the repository a package's `exports` (and the CLI's `bin`) point at its TypeScript sources;
// the tarball gets those of `publishConfig` (the built dist/), as pnpm and yarn publish them.
// npm applies no such override, so each package is staged with its published manifest first.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, '.pack');
const PACKAGES = ['packages/ledger', 'packages/queue', 'packages/telemetry', 'packages/runtime', 'packages/client', 'apps/worker', 'apps/producer', 'apps/cli'];

interface Manifest {
  name: string;
  files: string[];
  publishConfig?: Record<string, unknown>;
  scripts?: Record<string, string>;
  [field: string]: unknown;
}

/** The manifest as published: publishConfig's fields win, and the repository-only fields go. */
function published(manifest: Manifest): Manifest {
  const { publishConfig = {}, scripts: _scripts, ...rest } = manifest;
  return { ...rest, ...publishConfig };
}

const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

run('npx', ['tsdown', '--log-level', 'warn'], root);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const dir of PACKAGES) {
  const source = path.join(root, dir);
  const manifest = JSON.parse(readFileSync(path.join(source, 'package.json'), 'utf8')) as Manifest;
  const stage = path.join(out, 'stage', path.basename(dir));
  mkdirSync(stage, { recursive: true });
  for (const entry of manifest.files) cpSync(path.join(source, entry), path.join(stage, entry), { recursive: true });
  cpSync(path.join(root, 'LICENSE'), path.join(stage, 'LICENSE'));
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(published(manifest), null, 2)}\n`);
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], stage)) as Array<{
    filename: string;
    size: number;
    unpackedSize: number;
  }>;
  if (!packed) throw new Error(`npm pack printed nothing for ${manifest.name}`);
  process.stdout.write(
    `${packed.filename.padEnd(36)} ${(packed.size / 1024).toFixed(1).padStart(7)} kB packed, ${(packed.unpackedSize / 1024).toFixed(1).padStart(7)} kB unpacked\n`,
  );
}
rmSync(path.join(out, 'stage'), { recursive: true, force: true });

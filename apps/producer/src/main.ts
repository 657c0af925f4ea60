// The producer process: configured from the environment (the only file that reads it), serves
// the HTTP API, and closes everything on SIGTERM/SIGINT. `npm run producer` / `runledger producer`.
import { ConfigError } from './config';
import { createServer } from './create-server';

async function main(): Promise<void> {
  const server = await createServer({ env: process.env });
  const log = server.app.log;
  let closing = false;
  const close = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info(`${signal}: closing`);
    const force = setTimeout(() => {
      log.error('close took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    await server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void close('SIGTERM'));
  process.once('SIGINT', () => void close('SIGINT'));
  await server.listen();
}

main().catch((err: Error) => {
  console.error(`runledger producer: ${err instanceof ConfigError ? err.message : `failed to start: ${err.stack ?? err.message}`}`);
  process.exit(1);
});

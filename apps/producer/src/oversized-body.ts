import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

// A body over the limit answers 413 with `Connection: close`. Closing the socket while the client
// still sends makes the kernel reset the connection, and the client saw EPIPE / ECONNRESET
// instead of its 413. So the refused body is read and dropped first, within bounds, and a client
// that asks with `Expect: 100-continue` is answered before it sends anything.

/** The most of a refused body the producer reads and drops before it answers 413; past it, it closes. */
export const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;
/** The longest it spends on that. */
export const DRAIN_LIMIT_MS = 10_000;

const NO_BODY_COMING = Symbol('runledger.noBodyComing');
type Marked = IncomingMessage & { [NO_BODY_COMING]?: true };

/**
 * Answers `Expect: 100-continue` itself: a declared Content-Length over `limitBytes` gets no
 * 100 Continue, so the client sends no body and reads the 413 the route's body parser raises.
 */
export function answerOversizedBeforeBody(app: FastifyInstance, limitBytes: number): void {
  app.server.on('checkContinue', (req: Marked, res) => {
    if (Number(req.headers['content-length']) > limitBytes) req[NO_BODY_COMING] = true;
    else res.writeContinue();
    app.server.emit('request', req, res);
  });
}

/**
 * Reads and drops what is left of a refused body, so the client has sent it all when the 413
 * goes out. Resolves at once when there is nothing left or the declared size is past
 * DRAIN_LIMIT_BYTES; otherwise at the body's end, after DRAIN_LIMIT_BYTES, or after DRAIN_LIMIT_MS.
 */
export function drainRefusedBody(req: Marked): Promise<void> {
  if (req[NO_BODY_COMING] || req.complete || req.destroyed || Number(req.headers['content-length']) > DRAIN_LIMIT_BYTES) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    let received = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData).off('end', done).off('error', done).off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > DRAIN_LIMIT_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_LIMIT_MS);
    req.on('data', onData).on('end', done).on('error', done).on('close', done);
    req.resume();
  });
}

// Preloaded (`node --import`) into every child of `npm start`. The supervisor talks to its
// children over an IPC channel; when the channel closes because the supervisor is gone (even
// after a SIGKILL), the child sends itself SIGTERM and shuts down the way it always does, so
// no orphan keeps running. The channel does not keep the child alive on its own.
if (process.channel) {
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  process.channel.unref();
}

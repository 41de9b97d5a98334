/** Something with a graceful `close()`: a worker. */
interface Closable {
  close(): Promise<void>;
}

const closables = new Set<Closable>();

/**
 * The one SIGTERM listener of toolloop's workers: closes every worker that asked for it (each
 * finishes the jobs it is running and takes no more), then — when no other SIGTERM listener is
 * left — sends SIGTERM again, so the process ends as it would have without this listener.
 */
function onSigterm(): void {
  process.removeListener("SIGTERM", onSigterm);
  const closing = [...closables].map((closable) => closable.close());
  closables.clear();
  void Promise.allSettled(closing).then(() => {
    if (process.listenerCount("SIGTERM") === 0) process.kill(process.pid, "SIGTERM");
  });
}

/** Closes `closable` on SIGTERM; returns the function that stops that (call it from `close`). @internal */
export function closeOnSigterm(closable: Closable): () => void {
  if (closables.size === 0) process.on("SIGTERM", onSigterm);
  closables.add(closable);
  return () => {
    if (!closables.delete(closable) || closables.size > 0) return;
    process.removeListener("SIGTERM", onSigterm);
  };
}

import { type QueueBase, RedisQueueBackend } from "bullmq";

/**
 * Disconnects the Redis clients of a BullMQ queue, event reader or worker at once: no QUIT, no
 * reconnecting. For a close that Redis cannot answer (BullMQ's own close then waits for it for
 * good, or fails and leaves the client retrying without its error listener, so that ioredis prints).
 * @internal
 */
export function dropConnections(part: Pick<QueueBase, "getBackend">): void {
  const backend = part.getBackend();
  if (!(backend instanceof RedisQueueBackend)) return;
  for (const client of [backend.client, backend.blockingClient]) {
    void client?.then(
      (redis) => redis.disconnect(),
      () => {},
    );
  }
}

import { type ConnectionOptions, type QueueBase, RedisQueueBackend } from "bullmq";
import { isRecord } from "../internal/describe.js";

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

/**
 * Checks the `connection` option: an object (BullMQ connection options or a Redis client). What
 * else was given is not echoed, only its type: a Redis URL holds the password.
 * @internal
 */
export function checkConnection(where: string, value: unknown): ConnectionOptions {
  if (isRecord(value)) return value as ConnectionOptions;
  const given = value === null ? "null" : typeof value;
  throw new TypeError(
    `${where}: connection must be BullMQ connection options or a Redis client, got ${given} (not shown: it may hold a password)`,
  );
}

import { type ConnectionOptions, type QueueBase, RedisQueueBackend } from "bullmq";
import { isPlainObject, isRecord } from "../internal/describe.js";

/** What `dropConnections` needs of an ioredis client (through BullMQ's proxy of it). */
interface DroppableClient {
  disconnect(): unknown;
  readonly status?: unknown;
  setStatus?: unknown;
  flushQueue?: unknown;
}

/** What `dropConnections` needs of BullMQ's RedisConnection: its client, also before Redis ever answered. */
interface DroppableConnection {
  readonly client: Promise<DroppableClient>;
  readonly _client?: Partial<DroppableClient> | undefined;
}

/**
 * Disconnects an ioredis client for good. One that waits to reconnect has no socket whose close
 * would end it: `disconnect()` only clears its timer and leaves it "reconnecting" for good, so that
 * whatever waits for it (BullMQ's close: its lock and stalled-job timers with it) waits for good.
 * It is ended here as ioredis ends a client closed by hand: status "end", its queued commands failed.
 */
function disconnect(client: DroppableClient): void {
  client.disconnect();
  if (client.status !== "reconnecting") return;
  const { setStatus, flushQueue } = client;
  if (typeof setStatus !== "function" || typeof flushQueue !== "function") return;
  setStatus.call(client, "end");
  flushQueue.call(client, new Error("Connection is closed."));
}

/**
 * Disconnects the Redis clients of a BullMQ queue, event reader or worker at once: no QUIT, no
 * reconnecting. For a close that Redis cannot answer (BullMQ's own close then waits for it for
 * good, or fails and leaves the client retrying without its error listener, so that ioredis prints).
 * A client that never reached Redis is disconnected too: BullMQ's `client` promise resolves only
 * once Redis answered, so the client itself is taken (else its reconnect timers, one per
 * connection, kept the process alive for good).
 * @internal
 */
export function dropConnections(part: Pick<QueueBase, "getBackend">): void {
  const backend = part.getBackend();
  if (!(backend instanceof RedisQueueBackend)) return;
  for (const connection of [backend.connection, backend.blockingConnection]) {
    if (connection === undefined) continue;
    const droppable = connection as unknown as DroppableConnection;
    const client = droppable._client;
    if (client !== undefined && typeof client.disconnect === "function") {
      disconnect(client as DroppableClient);
      continue;
    }
    // A BullMQ without that field: the client once it is ready (not before, as said above).
    void droppable.client.then(disconnect, () => {});
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

/** The connection a queue itself uses: an options object fails fast while Redis is away. @internal */
export function failFast(connection: ConnectionOptions): ConnectionOptions {
  if (isPlainObject(connection)) return { ...connection, enableOfflineQueue: false };
  return connection;
}

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const METHOD = "notifications/tools/list_changed";

/** A notification handler as the SDK stores it (it parses the raw notification itself). */
type StoredHandler = (notification: unknown) => unknown;

interface FanOut {
  readonly listeners: Set<() => void>;
  /** The handler the SDK stored for ours, to tell whether it is still installed. */
  installed: unknown;
  /** The handler that was there before ours (the user's, or the SDK's `listChanged` option's). */
  readonly previous: StoredHandler | undefined;
}

// One handler per client for every import: `setNotificationHandler` replaces the method's handler.
const fanOuts = new WeakMap<object, FanOut>();

/**
 * The SDK's own map of notification handlers, to chain a handler set before ours. It is private in
 * v1's types, so it is read defensively: without it (another SDK version), an earlier handler is
 * replaced rather than chained.
 */
function storedHandlers(client: Client): Map<unknown, unknown> | undefined {
  const handlers: unknown = Reflect.get(client, "_notificationHandlers");
  return handlers instanceof Map ? handlers : undefined;
}

function install(client: Client, listeners: Set<() => void>): FanOut {
  const handlers = storedHandlers(client);
  const current = handlers?.get(METHOD);
  const fanOut: FanOut = {
    listeners,
    installed: undefined,
    previous: typeof current === "function" ? (current as StoredHandler) : undefined,
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
    for (const listener of [...fanOut.listeners]) {
      try {
        listener();
      } catch {
        // a listener only schedules work; one that throws must not cost the others their update
      }
    }
    // The earlier handler gets the notification too; what it throws goes to the client's onerror.
    if (fanOut.previous !== undefined) return Promise.resolve(fanOut.previous(notification)).then(() => undefined);
  });
  fanOut.installed = handlers?.get(METHOD);
  fanOuts.set(client, fanOut);
  return fanOut;
}

/**
 * Calls `listener` on every `notifications/tools/list_changed` the client receives, beside any
 * other subscriber: one handler per client fans out to all of them, and calls the handler that was
 * set before it (the user's own, or the one of the client's `listChanged` option). Returns the
 * unsubscribe function; when the last subscriber leaves, the earlier handler is put back.
 *
 * A handler set on the client after this replaces the fan-out (the SDK keeps one per method); the
 * next subscription installs it again, chaining that handler.
 */
export function onToolListChanged(client: Client, listener: () => void): () => void {
  let fanOut = fanOuts.get(client);
  const handlers = storedHandlers(client);
  if (fanOut === undefined) {
    fanOut = install(client, new Set());
  } else if (handlers !== undefined && handlers.get(METHOD) !== fanOut.installed) {
    // Someone replaced the fan-out: install it again, chaining their handler, keeping the listeners.
    fanOut = install(client, fanOut.listeners);
  }
  const { listeners } = fanOut;
  listeners.add(listener);
  return () => {
    if (!listeners.delete(listener) || listeners.size > 0) return;
    // The fan-out now installed (it may have been installed again since this subscription).
    const current = fanOuts.get(client);
    if (current?.listeners !== listeners) return;
    fanOuts.delete(client);
    const stored = storedHandlers(client);
    // Only while ours is still the installed handler: never remove one set after it.
    if (stored === undefined || stored.get(METHOD) !== current.installed) return;
    if (current.previous === undefined) client.removeNotificationHandler(METHOD);
    else stored.set(METHOD, current.previous);
  };
}

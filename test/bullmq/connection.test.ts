import { describe, expect, it } from "vitest";
import { checkConnection } from "../../src/bullmq/connection.js";

// dropConnections is shown by the close() tests of create-tool-queue.test.ts and create-tool-worker.test.ts.
describe("checkConnection", () => {
  it("passes connection options through", () => {
    const options = { host: "127.0.0.1", port: 6379, password: "hunter2" };
    expect(checkConnection("here", options)).toBe(options);
  });

  it.each([
    ["redis://:hunter2@redis.internal:6379", "string"],
    [6379, "number"],
    [null, "null"],
    [undefined, "undefined"],
  ])("%j is a TypeError that shows its type only", (value, type) => {
    expect(() => checkConnection("here", value)).toThrow(
      new TypeError(
        `here: connection must be BullMQ connection options or a Redis client, got ${type} (not shown: it may hold a password)`,
      ),
    );
  });
});

import { afterEach, expect, it } from "vitest";
import { redisServerBinary, startRedisServer } from "./redis-server.js";

const path = process.env.PATH;
afterEach(() => {
  process.env.PATH = path;
});

it("uses the redis-server on PATH", () => {
  expect(redisServerBinary()).toBe("redis-server");
});

it("without redis-server (and without apt-get to install it), fails with the exact command: never skips", () => {
  process.env.PATH = "/nonexistent";
  expect(() => redisServerBinary()).toThrow(
    "the toolloop/bullmq tests need a redis-server on PATH; install it with: sudo apt-get install -y redis-server",
  );
});

it("starts a server on 127.0.0.1 in its own directory, stops and starts it again on the same port", async () => {
  const server = await startRedisServer();
  try {
    expect(server.connection).toEqual({ host: "127.0.0.1", port: server.port });
    await server.stop();
    await server.start();
  } finally {
    await server.dispose();
  }
});

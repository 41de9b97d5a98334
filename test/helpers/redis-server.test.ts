import { type AddressInfo, createServer } from "node:net";
import { Redis } from "ioredis";
import { afterEach, expect, it } from "vitest";
import { redisServerBinary, startRedisProxy, startRedisServer } from "./redis-server.js";

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

it("a port another process took before redis-server could bind it: started on another port", async () => {
  // Another process's server on that port (it hangs up on whoever connects).
  const taken = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  const { port } = taken.address() as AddressInfo;
  try {
    const server = await startRedisServer({ port });
    try {
      expect(server.port).not.toBe(port);
      const client = new Redis({ ...server.connection, lazyConnect: true });
      try {
        expect(await client.ping()).toBe("PONG");
      } finally {
        client.disconnect();
      }
    } finally {
      await server.dispose();
    }
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});

it("a proxy passes Redis through, cuts it off while blocked, and lets it through again", async () => {
  const server = await startRedisServer();
  const proxy = await startRedisProxy(server.port);
  const errors: string[] = [];
  const client = new Redis({ ...proxy.connection, retryStrategy: () => 20, maxRetriesPerRequest: 0 });
  client.on("error", (error: Error) => errors.push(error.message));
  try {
    expect(await client.ping()).toBe("PONG");
    proxy.block();
    await expect(client.ping()).rejects.toThrow();
    proxy.unblock();
    await new Promise((resolve) => client.once("ready", resolve));
    expect(await client.ping()).toBe("PONG");
  } finally {
    client.disconnect();
    await proxy.close();
    await server.dispose();
  }
});

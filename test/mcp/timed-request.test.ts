import { afterEach, describe, expect, it, vi } from "vitest";
import { RequestTimedOut, timedRequest } from "../../src/mcp/timed-request.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/mcp-servers.js";

const clients: ScriptedServer["client"][] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const client of clients.splice(0)) await client.close();
});

async function scripted(
  listTools: NonNullable<Parameters<typeof startScriptedServer>[0]["listTools"]>,
): Promise<ScriptedServer> {
  const server = await startScriptedServer({ listTools });
  clients.push(server.client);
  return server;
}

const LIST = { method: "tools/list" as const };

describe("timedRequest", () => {
  it("resolves with the result as the server sent it, unchecked (a malformed listing included)", async () => {
    const server = await scripted(() => ({ result: { tools: { not: "an array" }, extra: 1 } }));
    const result = await timedRequest(server.client, LIST, 60_000, new AbortController().signal);
    expect(result).toEqual({ tools: { not: "an array" }, extra: 1 });
  });

  it("rejects with RequestTimedOut when its own timer fires, and cancels the request", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const server = await scripted(() => "never");
    const request = timedRequest(server.client, LIST, 5_000, new AbortController().signal);
    const outcome = expect(request).rejects.toThrow(new RequestTimedOut("no answer within 5000 ms"));
    await vi.advanceTimersByTimeAsync(5_000);
    await outcome;
    await vi.waitFor(() =>
      expect(server.notifications).toContainEqual(expect.objectContaining({ method: "notifications/cancelled" })),
    );
  });

  it("takes a server's error -32001 (Request timed out) as the server's error, not as its own timeout", async () => {
    const server = await scripted(() => ({ error: { code: -32001, message: "Request timed out" } }));
    const request = timedRequest(server.client, LIST, 60_000, new AbortController().signal);
    await expect(request).rejects.toThrow("MCP error -32001: Request timed out");
    await expect(request).rejects.not.toBeInstanceOf(RequestTimedOut);
  });

  it("the caller's signal cancels the request: it rejects with the signal's reason, not RequestTimedOut", async () => {
    const server = await scripted(() => "never");
    const controller = new AbortController();
    const request = timedRequest(server.client, LIST, 60_000, controller.signal);
    controller.abort(new Error("stopped"));
    await expect(request).rejects.toThrow("stopped");
    await expect(request).rejects.not.toBeInstanceOf(RequestTimedOut);
  });

  it("gives the SDK the longest timeout setTimeout honours, not ms", async () => {
    // No timer fires on its own: the answer may take as long as a loaded machine needs.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const server = await scripted(() => ({ result: { tools: [] } }));
    const request = vi.spyOn(server.client, "request");
    await timedRequest(server.client, LIST, 10, new AbortController().signal);
    expect(request.mock.calls[0]?.[2]).toMatchObject({ timeout: 2_147_483_647 });
  });
});

import { afterEach } from "vitest";
import { type Tool, ToolRegistry } from "../../src/index.js";
import { type ReplayResponse, type ReplayServer, readSample, startReplayServer } from "./replay-server.js";

type Script = Parameters<typeof startReplayServer>[0];

/**
 * For a test file: returns a function that starts a replay server, and closes every server it
 * started after each test. Call it once at the top level of the file.
 */
export function useReplayServers(): (script: Script) => Promise<ReplayServer> {
  const servers: ReplayServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (script) => {
    const server = await startReplayServer(script);
    servers.push(server);
    return server;
  };
}

/** A 200 answer whose body is the wire sample `file`. */
export const okSample = (file: string): ReplayResponse => ({ body: readSample(file) });

/** A registry holding `tools`, in order. */
export function registryOf(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}

/**
 * Starts `run` with a fresh signal, waits until the server has seen the request, then aborts with
 * `reason`. Returns `run`'s promise in `settled` for the test to assert on (it is marked handled
 * here, so an early rejection is not reported as unhandled).
 */
export async function abortOnceRequested<T>(
  server: ReplayServer,
  run: (signal: AbortSignal) => Promise<T>,
  reason?: unknown,
): Promise<{ settled: Promise<T> }> {
  const controller = new AbortController();
  const settled = run(controller.signal);
  settled.catch(() => {});
  await server.waitForRequests(server.requests.length + 1);
  controller.abort(reason);
  return { settled };
}

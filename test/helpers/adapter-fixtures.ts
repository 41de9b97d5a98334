import { afterEach, expect } from "vitest";
import {
  type InvalidProviderResponseError,
  isInvalidProviderResponseError,
  isToolLoopError,
  type Message,
  type Tool,
  type ToolLoopError,
  ToolRegistry,
} from "../../src/index.js";
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

/**
 * Awaits `pending`, which must reject with an `InvalidProviderResponseError` from `provider` whose
 * message matches `message`; returns it for further checks.
 */
export async function expectUnreadable(
  pending: Promise<unknown>,
  provider: string,
  message: string | RegExp,
): Promise<InvalidProviderResponseError> {
  const error = await pending.then(
    (value) => {
      throw new Error(`expected an InvalidProviderResponseError, but it resolved with ${JSON.stringify(value)}`);
    },
    (caught: unknown) => caught,
  );
  expect(isInvalidProviderResponseError(error), String(error)).toBe(true);
  const invalid = error as InvalidProviderResponseError;
  expect(invalid.provider).toBe(provider);
  expect(invalid.message).toMatch(message);
  expect(invalid.message.startsWith(`${provider}: `)).toBe(true);
  expect(invalid.body.length).toBeLessThanOrEqual(2_000);
  return invalid;
}

/**
 * Awaits a `runToolLoop` that must reject with a `ToolLoopError` whose `cause` is an
 * `InvalidProviderResponseError` from `provider`, and whose `messages` are `transcript` (what the
 * loop had when the unreadable response came).
 */
export async function expectLoopRejectsUnreadable(
  run: Promise<unknown>,
  provider: string,
  transcript: Array<Partial<Message>>,
): Promise<ToolLoopError> {
  const error = await run.then(
    () => {
      throw new Error("expected the loop to reject");
    },
    (caught: unknown) => caught,
  );
  expect(isToolLoopError(error), String(error)).toBe(true);
  const loopError = error as ToolLoopError;
  expect(isInvalidProviderResponseError(loopError.cause)).toBe(true);
  expect((loopError.cause as InvalidProviderResponseError).provider).toBe(provider);
  expect(loopError.message).toContain((loopError.cause as Error).message);
  expect(loopError.messages).toHaveLength(transcript.length);
  transcript.forEach((message, index) => {
    expect(loopError.messages[index]).toMatchObject(message);
  });
  return loopError;
}

import { afterEach, beforeEach, expect, vi } from "vitest";

// The library never writes to the console (GUIDE §9): any console output during a test fails it.
const methods = ["log", "info", "warn", "error", "debug", "trace"] as const;

beforeEach(() => {
  for (const method of methods) vi.spyOn(console, method);
});

afterEach(() => {
  for (const method of methods) {
    const spy = console[method] as unknown as { mock: { calls: unknown[][] } };
    expect(spy.mock.calls, `console.${method} was called`).toEqual([]);
  }
  vi.restoreAllMocks();
});

// `vi.waitFor` gives up after 1 s by default: on a machine whose cores are busy with other work,
// a condition that holds a little later would fail the test. It waits up to 30 s here unless a test
// says otherwise (a safety net: a waitFor still ends as soon as its condition holds).
const waitFor = vi.waitFor.bind(vi);
vi.waitFor = ((callback: Parameters<typeof vi.waitFor>[0], options?: Parameters<typeof vi.waitFor>[1]) =>
  waitFor(callback, typeof options === "number" ? options : { timeout: 30_000, ...options })) as typeof vi.waitFor;

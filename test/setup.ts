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

import { describe, expect, it, vi } from "vitest";

// The batch's combinator outside a Restate invocation: `RestatePromise.allSettled` as the native
// one, counting its calls (one per batch). The real engine is in restate-agent.test.ts and
// durable.test.ts.
const combined: unknown[][] = [];
vi.mock("@restatedev/restate-sdk", () => ({
  RestatePromise: {
    allSettled: (steps: unknown[]) => {
      combined.push(steps);
      return Promise.allSettled(steps);
    },
  },
}));

const { JournalBatch, batchesOf } = await import("../../src/restate/journal-batch.js");

/** A step that resolves (or rejects) with `value` once the test says so, logging when it was issued. */
function step(log: string[], name: string) {
  let settle!: (ok: boolean) => void;
  const promise = new Promise((resolve, reject) => {
    settle = (ok) => (ok ? resolve(name) : reject(new Error(`${name} failed`)));
  });
  promise.catch(() => {});
  return {
    issue: () => {
      log.push(name);
      return promise;
    },
    settle,
  };
}

describe("JournalBatch", () => {
  it("issues entries that arrive in one turn of the event loop together, in arrival order, through one combinator", async () => {
    combined.length = 0;
    const batch = new JournalBatch();
    const log: string[] = [];
    const [a, b, c] = [step(log, "a"), step(log, "b"), step(log, "c")];
    const first = batch.add(() => [a.issue() as never]);
    await Promise.resolve(); // a microtask later: still the same batch
    const second = batch.add(() => [b.issue() as never, c.issue() as never]);
    expect(log).toEqual([]); // nothing is issued before the check phase
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(["a", "b", "c"]);
    expect(combined).toHaveLength(1);
    c.settle(true);
    a.settle(true);
    b.settle(true);
    // Each entry gets its own steps' values, in its own order.
    expect(await first).toEqual(["a"]);
    expect(await second).toEqual(["b", "c"]);
  });

  it("starts a new batch for an entry added after the previous one was issued", async () => {
    combined.length = 0;
    const batch = new JournalBatch();
    const log: string[] = [];
    const [a, b] = [step(log, "a"), step(log, "b")];
    const first = batch.add(() => [a.issue() as never]);
    await new Promise((resolve) => setImmediate(resolve));
    const second = batch.add(() => [b.issue() as never]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(combined).toHaveLength(2);
    a.settle(true);
    b.settle(true);
    expect([await first, await second]).toEqual([["a"], ["b"]]);
  });

  it("fails only the entry whose step failed: the others of its batch get their values", async () => {
    const batch = new JournalBatch();
    const log: string[] = [];
    const [a, b, c] = [step(log, "a"), step(log, "b"), step(log, "c")];
    const first = batch.add(() => [a.issue() as never]);
    const second = batch.add(() => [b.issue() as never, c.issue() as never]);
    const third = batch.add(() => []);
    await new Promise((resolve) => setImmediate(resolve));
    a.settle(true);
    b.settle(true);
    c.settle(false);
    expect(await first).toEqual(["a"]);
    await expect(second).rejects.toThrow("c failed");
    expect(await third).toEqual([]);
  });

  it("rejects every entry of the batch with the error when issuing one of them throws (nothing half-issued is awaited)", async () => {
    const batch = new JournalBatch();
    const log: string[] = [];
    const a = step(log, "a");
    const first = batch.add(() => [a.issue() as never]);
    const second = batch.add(() => {
      throw new Error("cannot issue");
    });
    await expect(first).rejects.toThrow("cannot issue");
    await expect(second).rejects.toThrow("cannot issue");
    // The batch is done with: the next entry starts a new one.
    const b = step(log, "b");
    const third = batch.add(() => [b.issue() as never]);
    await new Promise((resolve) => setImmediate(resolve));
    b.settle(true);
    expect(await third).toEqual(["b"]);
  });
});

describe("batchesOf", () => {
  it("gives one context the same batches every time, kept apart for tool calls and approvals", () => {
    const ctx = {};
    const batches = batchesOf(ctx);
    expect(batchesOf(ctx)).toBe(batches);
    expect(batches.tools).not.toBe(batches.approvals);
    expect(batchesOf({}).tools).not.toBe(batches.tools);
  });
});

import { describe, expect, it } from "vitest";
import { MAX_BUFFERED_PROGRESS, ProgressBuffer } from "../../src/internal/progress-buffer.js";
import type { ProgressUpdate } from "../../src/progress.js";

const running = (index: number): ProgressUpdate => ({
  toolCallId: "c",
  toolName: "t",
  status: "running",
  message: String(index),
});
const final: ProgressUpdate = { toolCallId: "c", toolName: "t", status: "completed" };

describe("ProgressBuffer", () => {
  it("hands a waiting consumer the next update at once, and ends after the final one", async () => {
    const buffer = new ProgressBuffer();
    const first = buffer.next();
    buffer.push(running(1));
    expect(await first).toEqual({ done: false, value: running(1) });
    buffer.push(final);
    buffer.push(running(2)); // after the final one: ignored
    expect(await buffer.next()).toEqual({ done: false, value: final });
    expect(await buffer.next()).toEqual({ done: true, value: undefined });
  });

  it(`keeps at most ${MAX_BUFFERED_PROGRESS} unread updates, dropping the oldest running ones, never the final one`, async () => {
    const buffer = new ProgressBuffer();
    for (let index = 0; index < MAX_BUFFERED_PROGRESS * 3; index++) buffer.push(running(index));
    buffer.push(final);
    const read: ProgressUpdate[] = [];
    for await (const update of buffer) read.push(update);
    expect(read).toHaveLength(MAX_BUFFERED_PROGRESS);
    expect(read.at(-1)).toEqual(final);
    expect(read[0]?.message).toBe(String(MAX_BUFFERED_PROGRESS * 2 + 1));
  });

  it("return() discards what is buffered and what comes later, and ends a waiting next()", async () => {
    const buffer = new ProgressBuffer();
    buffer.push(running(1));
    await buffer.return();
    buffer.push(running(2));
    expect(await buffer.next()).toEqual({ done: true, value: undefined });

    const other = new ProgressBuffer();
    const waiting = other.next();
    await other.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
  });

  it("next() calls made before updates arrive are answered in order; those past the final one end", async () => {
    const buffer = new ProgressBuffer();
    const pending = [buffer.next(), buffer.next(), buffer.next()];
    buffer.push(running(1));
    buffer.push(final);
    expect(await Promise.all(pending)).toEqual([
      { done: false, value: running(1) },
      { done: false, value: final },
      { done: true, value: undefined },
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { CompletionDelivery } from "../../src/bullmq/completion-delivery.js";
import type { ToolCompletion } from "../../src/bullmq/index.js";
import { newToolResult, type ToolResult } from "../../src/index.js";
import { resolveLogger } from "../../src/internal/logger.js";
import { captureLogger } from "../helpers/capture-logger.js";

const DAY = 86_400_000;

function completion(id: string): ToolCompletion {
  return { toolCallId: id, toolName: "echo", result: newToolResult(`done ${id}`) };
}

function delivery(keepFinishedMs = DAY) {
  const { logger, lines } = captureLogger();
  return { delivery: new CompletionDelivery(keepFinishedMs, resolveLogger(logger, "test")), lines };
}

describe("CompletionDelivery", () => {
  it("gives each job id's completion to the handlers once, and to a callback that waits whenever it comes", () => {
    const { delivery: deliver } = delivery();
    const handled: string[] = [];
    deliver.addHandler((done) => void handled.push(done.toolCallId));
    deliver.settle("a", completion("a"));
    const results: ToolResult[] = [];
    deliver.wait("a", (result) => void results.push(result));
    deliver.settle("a", completion("a"));
    deliver.settle("a", completion("a"));
    expect(handled).toEqual(["a"]);
    expect(results.map((result) => result.forLLM)).toEqual(["done a"]);
    expect(deliver.waiting()).toEqual([]);
  });

  it("remembers the last 100,000 delivered job ids, not every one ever (a long-lived process stays bounded)", () => {
    const { delivery: deliver } = delivery();
    let handled = 0;
    deliver.addHandler(() => {
      handled++;
    });
    const done = completion("job");
    for (let index = 0; index <= 100_000; index++) deliver.settle(`job-${index}`, done);
    deliver.settle("job-100000", done);
    deliver.settle("job-1", done);
    expect(handled).toBe(100_001);
    // The oldest was forgotten when the 100,001st came: it is delivered again.
    deliver.settle("job-0", done);
    expect(handled).toBe(100_002);
  });

  it("withdraw drops a callback only where it is the one waiting", () => {
    const { delivery: deliver } = delivery();
    const first = () => {};
    const second = () => {};
    deliver.wait("a", first);
    deliver.wait("b", second);
    deliver.withdraw(["a", "b"], first);
    expect(deliver.waiting()).toEqual(["b"]);
  });

  it("a handler or callback that throws or rejects is logged; the others still run", async () => {
    const { delivery: deliver, lines } = delivery();
    const handled: string[] = [];
    deliver.addHandler(() => {
      throw new Error("handler broke");
    });
    deliver.addHandler(() => Promise.reject(new Error("handler rejected")));
    deliver.addHandler((done) => void handled.push(done.toolCallId));
    deliver.wait("a", () => {
      throw new Error("callback broke");
    });
    deliver.settle("a", completion("a"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(handled).toEqual(["a"]);
    expect(lines.map((line) => [line.msg, line.error])).toEqual([
      ["tool queue: onCompletion handler failed", "handler broke"],
      ["tool queue: async callback failed", "callback broke"],
      ["tool queue: onCompletion handler failed", "handler rejected"],
    ]);
  });

  it("after clear(), nothing is delivered", () => {
    const { delivery: deliver } = delivery();
    const handled: string[] = [];
    deliver.addHandler((done) => void handled.push(done.toolCallId));
    deliver.wait("a", () => void handled.push("callback"));
    deliver.clear();
    deliver.settle("a", completion("a"));
    expect(handled).toEqual([]);
    expect(deliver.waiting()).toEqual([]);
  });
});

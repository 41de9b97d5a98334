import { describe, expect, it } from "vitest";
import { newToolResult, ToolRegistry, ToolResult } from "../src/index.js";
import { registryWith, tool } from "./helpers/loop-tools.js";

describe("execution metadata (seed 003's ToolMetadata, issue 10)", () => {
  it("every result of execute and executeWithContext carries its call's metadata, also error results", async () => {
    const shared = newToolResult("same instance");
    const registry = registryWith(
      tool("same", () => shared),
      // Never answers: its 1 ms timeout wins whatever the machine's load (a 5 ms tool could win the race).
      tool("slow", () => new Promise<never>(() => {})),
      tool("boom", () => {
        throw new Error("boom");
      }),
    );
    const before = Date.now();
    const ok = await registry.executeWithContext("same", { a: 1 }, "chan", "chat", undefined, { toolCallId: "id-1" });
    expect(ok.metadata).toMatchObject({ toolName: "same", toolCallId: "id-1", parameters: { a: 1 } });
    const meta = ok.metadata as NonNullable<typeof ok.metadata>;
    expect(meta.startTime).toBeGreaterThanOrEqual(before);
    expect(meta.endTime).toBeGreaterThanOrEqual(meta.startTime);
    expect(meta.durationMs).toBeGreaterThanOrEqual(0);
    expect(meta.endTime - meta.startTime).toBeCloseTo(meta.durationMs, 3);
    const failures = await Promise.all([
      registry.execute("missing", {}),
      registry.execute("boom", {}),
      registry.execute("slow", {}, { timeoutMs: 1 }),
      registry.execute("same", "not an object" as unknown as Record<string, unknown>),
    ]);
    expect(failures.map((result) => [result.isError, result.metadata?.toolName])).toEqual([
      [true, "missing"],
      [true, "boom"],
      [true, "slow"],
      [true, "same"], // not an object: invalid arguments
    ]);
    expect(failures[3]?.metadata?.parameters).toEqual({});
    expect(failures[0]?.metadata).not.toHaveProperty("toolCallId");
  });

  it("two concurrent calls never share a result object, even when the tool returns one instance", async () => {
    const shared = newToolResult("same instance").withData({ k: "v" });
    const registry = registryWith(tool("same", () => shared));
    const [first, second] = await Promise.all([
      registry.execute("same", { n: 1 }, { toolCallId: "one" }),
      registry.execute("same", { n: 2 }, { toolCallId: "two" }),
    ]);
    expect(first).not.toBe(second);
    expect(first?.metadata?.toolCallId).toBe("one");
    expect(second?.metadata?.toolCallId).toBe("two");
    expect(first?.data).toEqual({ k: "v" });
    expect(shared.metadata).toBeUndefined();
    expect(first).toBeInstanceOf(ToolResult);
  });

  it("a subclass of ToolResult stays one, with its fields and err", async () => {
    class Rich extends ToolResult {
      extra = "kept";
      shout(): string {
        return this.forLLM.toUpperCase();
      }
    }
    const rich = new Rich({ forLLM: "rich" }).withError(new Error("why"));
    const registry = registryWith(tool("rich", () => rich));
    const result = (await registry.execute("rich", {})) as Rich;
    expect(result).toBeInstanceOf(Rich);
    expect(result.shout()).toBe("RICH");
    expect(result.extra).toBe("kept");
    expect(result.err?.message).toBe("why");
  });

  it("toJSON writes Go-style keys; the loop's transcript is unchanged", async () => {
    const registry = registryWith(tool("echo", () => "hi"));
    const result = await registry.execute("echo", { x: 1 }, { toolCallId: "c1" });
    const json = JSON.parse(JSON.stringify(result)) as Record<string, Record<string, unknown>>;
    expect(Object.keys(json.metadata ?? {}).sort()).toEqual(
      ["duration_ms", "end_time", "parameters", "start_time", "tool_call_id", "tool_name"].sort(),
    );
    expect(json.metadata?.tool_name).toBe("echo");
    expect(json.metadata?.parameters).toEqual({ x: 1 });
  });

  it("a hostile __proto__ key in the arguments pollutes nothing and a huge name is cut", async () => {
    const registry = registryWith(tool("echo", () => "hi"));
    const args = JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const result = await registry.execute("echo", args);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(result.metadata?.parameters).toBe(args);
    const huge = await registry.execute("x".repeat(100_000), {});
    expect((huge.metadata?.toolName.length ?? 0) < 1000).toBe(true);
  });
});

describe("progress of a call (issue 10)", () => {
  it.each<[string, unknown]>([
    [
      "an object whose toString throws",
      {
        toString: () => {
          throw new Error("no string");
        },
      },
    ],
    ["a null-prototype object", Object.create(null)],
    ["a number", 42],
  ])("a name that is %s is an unknown tool, also with onProgress (never a throw)", async (_label, name) => {
    const registry = new ToolRegistry();
    const statuses: string[] = [];
    const result = await registry.execute(name as string, {}, { onProgress: (update) => statuses.push(update.status) });
    expect(result.err).toMatchObject({ code: "tool_not_found" });
    expect(statuses).toEqual(["failed"]);
  });
});

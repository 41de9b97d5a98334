import { describe, expect, it } from "vitest";
import { convertOncePerArray, frozenTools } from "../../../src/adapters/shared/tools-cache.js";
import { type Message, runToolLoop, type ToolDefinition } from "../../../src/index.js";
import { recordingAdapters, registryOf } from "../../helpers/adapter-fixtures.js";

/** `count` definitions that count how often a conversion reads them (each reads `function` once or more). */
function countingDefinitions(count: number): { definitions: ToolDefinition[]; reads: () => number } {
  let reads = 0;
  const definitions = Array.from({ length: count }, (_, index) => {
    const fn = {
      name: `tool_${index}`,
      description: `Tool ${index}`,
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    };
    return Object.defineProperty({ type: "function" }, "function", {
      enumerable: true,
      get() {
        reads++;
        return fn;
      },
    }) as ToolDefinition;
  });
  return { definitions, reads: () => reads };
}

const tool = (name: string) => ({
  name,
  description: `The ${name} tool`,
  parameters: { type: "object", properties: { city: { type: "string" } } },
  execute: () => "ok",
});

describe("convertOncePerArray", () => {
  it("converts a frozen array once, and keeps one result per array", () => {
    let conversions = 0;
    const convert = convertOncePerArray((definitions) => {
      conversions++;
      return { count: definitions.length };
    });
    const first = Object.freeze(countingDefinitions(2).definitions);
    const second = Object.freeze(countingDefinitions(3).definitions);

    const result = convert(first);
    expect(convert(first)).toBe(result);
    expect(convert(second)).toEqual({ count: 3 });
    expect(convert(second)).not.toBe(result);
    expect(conversions).toBe(2);
  });

  it("converts a mutable array on every call: the caller may change it", () => {
    let conversions = 0;
    const convert = convertOncePerArray((definitions) => {
      conversions++;
      return { names: definitions.map((definition) => definition.function.name) };
    });
    const { definitions } = countingDefinitions(1);

    expect(convert(definitions)).toEqual({ names: ["tool_0"] });
    definitions.push(...countingDefinitions(2).definitions.slice(1));
    expect(convert(definitions)).toEqual({ names: ["tool_0", "tool_1"] });
    expect(conversions).toBe(2);
  });
});

describe("frozenTools", () => {
  it("freezes the array and each tool, and returns the same array", () => {
    const tools = [{ name: "a" }, { name: "b" }];
    const frozen = frozenTools(tools);
    expect(frozen).toBe(tools);
    expect(Object.isFrozen(frozen)).toBe(true);
    expect(frozen.every((item) => Object.isFrozen(item))).toBe(true);
  });
});

const messages: Message[] = [{ role: "user", content: "hi" }];

// The official @google/genai rewrites each declaration's `parameters` in place: those stay mutable.
const SENT_MUTABLE = new Set(["gemini"]);

describe.each(recordingAdapters)("$name converts the tools once per definitions array", (adapter) => {
  it("converts a frozen array once across steps, and sends the same tools each time", async () => {
    const { provider, requests } = adapter.create();
    const { definitions, reads } = countingDefinitions(20);
    const frozen = Object.freeze(definitions) as ToolDefinition[];

    await provider.chat(messages, frozen, "model", {});
    const afterFirst = reads();
    await provider.chat(messages, frozen, "model", {});
    await provider.chat(messages, frozen, "model", {});

    expect(afterFirst).toBeGreaterThanOrEqual(20);
    expect(reads()).toBe(afterFirst);
    const sent = adapter.toolsOf(requests[0] ?? {});
    expect(adapter.toolNamesOf(requests[0] ?? {})).toHaveLength(20);
    expect(adapter.toolsOf(requests[2] ?? {})).toBe(sent);
    expect(Object.isFrozen(sent)).toBe(!SENT_MUTABLE.has(adapter.name));
  });

  it("converts a mutable array on every call", async () => {
    const { provider, requests } = adapter.create();
    const { definitions, reads } = countingDefinitions(3);

    await provider.chat(messages, definitions, "model", {});
    const afterFirst = reads();
    await provider.chat(messages, definitions, "model", {});

    expect(reads()).toBe(2 * afterFirst);
    expect(adapter.toolsOf(requests[1] ?? {})).toEqual(adapter.toolsOf(requests[0] ?? {}));
  });

  it("sends the registry's tools converted once until the registry changes", async () => {
    const { provider, requests } = adapter.create();
    const registry = registryOf(tool("alpha"), tool("beta"));

    await runToolLoop({ provider, tools: registry, maxIterations: 1 }, messages);
    await runToolLoop({ provider, tools: registry, maxIterations: 1 }, messages);
    registry.register(tool("gamma"));
    await runToolLoop({ provider, tools: registry, maxIterations: 1 }, messages);

    const [first, second, third] = requests.map((request) => adapter.toolsOf(request));
    expect(second).toBe(first);
    expect(third).not.toBe(first);
    expect(adapter.toolNamesOf(requests[1] ?? {})).toEqual(["alpha", "beta"]);
    expect(adapter.toolNamesOf(requests[2] ?? {})).toEqual(["alpha", "beta", "gamma"]);
  });
});

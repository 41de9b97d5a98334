/**
 * How a call's arguments reach the loop: `toCallArguments` itself, then what a hostile model can
 * put in a call's arguments, through every adapter end to end (replay server → real client →
 * adapter → runToolLoop → tool): keys that name prototypes (D02) and JSON values that are not
 * objects (D07).
 */
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { describe, expect, it, vi } from "vitest";
import { type AISDKLanguageModelLike, createAISDKProvider } from "../../../src/adapters/ai-sdk/index.js";
import { createAnthropicProvider } from "../../../src/adapters/anthropic/index.js";
import { createGeminiProvider } from "../../../src/adapters/gemini/index.js";
import { createOllamaProvider } from "../../../src/adapters/ollama/index.js";
import { createOpenAIChatProvider, createOpenAIResponsesProvider } from "../../../src/adapters/openai/index.js";
import { callArgumentsText, toCallArguments } from "../../../src/adapters/shared/call-arguments.js";
import { type LLMProvider, runToolLoop, type Tool, type ToolCall } from "../../../src/index.js";
import { registryOf, useReplayServers } from "../../helpers/adapter-fixtures.js";
import type { ReplayResponse, ReplayServer } from "../../helpers/replay-server.js";

const startServer = useReplayServers();

/** How the API carries the arguments: OpenAI sends JSON text; compatible servers (and the other APIs) a JSON value. */
type Placement = "text" | "value";

interface AdapterCase {
  name: string;
  placement: Placement;
  /**
   * A provider whose first answer calls `probe` with `json` (placed as `placement` says), then
   * answers "done"; `echoed()` reads the call's arguments back from the follow-up request.
   */
  setup(json: string): Promise<{ provider: LLMProvider; echoed(): unknown }>;
}

/** The value at `path` in `value` (fixed keys only). */
const at = (value: unknown, ...path: Array<string | number>): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], value);
/** The value at `path` in the body of the server's second request (the replay server parses it with JSON.parse). */
const followUp = (server: ReplayServer, ...path: Array<string | number>) => at(server.requests[1]?.body, ...path);

/** `json` as it appears in a wire body: as a JSON string (text) or inline (value). */
const placed = (json: string, placement: Placement) => (placement === "text" ? JSON.stringify(json) : json);

const raw = (text: string, contentType = "application/json"): ReplayResponse => ({ raw: text, contentType });

function chatCall(json: string, placement: Placement): ReplayResponse {
  return raw(
    `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"probe","arguments":${placed(json, placement)}}}]},"finish_reason":"tool_calls"}]}`,
  );
}
const chatDone: ReplayResponse = {
  body: {
    id: "chatcmpl-2",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
  },
};

function responsesCall(json: string, placement: Placement): ReplayResponse {
  return raw(
    `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"probe","arguments":${placed(json, placement)},"status":"completed"}]}`,
  );
}
const responsesDone: ReplayResponse = {
  body: {
    id: "resp_2",
    object: "response",
    status: "completed",
    output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] }],
  },
};

const ollamaChunk = (message: string, done: boolean) =>
  `{"model":"llama3.2","created_at":"2025-01-01T00:00:00Z","message":${message},"done":${done}${done ? ',"done_reason":"stop"' : ""}}\n`;
const ndjson = (text: string) => raw(text, "application/x-ndjson");

const openaiClient = (url: string) => new OpenAI({ apiKey: "test", baseURL: `${url}/v1`, maxRetries: 0 });

function openaiCases(strict: boolean): AdapterCase[] {
  const mode = strict ? "strict" : "non-strict";
  return (["text", "value"] as const).flatMap((placement) => [
    {
      name: `OpenAI Chat Completions, ${mode}, arguments as ${placement}`,
      placement,
      async setup(json) {
        const server = await startServer([chatCall(json, placement), chatDone]);
        return {
          provider: createOpenAIChatProvider({ client: openaiClient(server.url), strict }),
          echoed: () => followUp(server, "messages", 1, "tool_calls", 0, "function", "arguments"),
        };
      },
    },
    {
      name: `OpenAI Responses, ${mode}, arguments as ${placement}`,
      placement,
      async setup(json) {
        const server = await startServer([responsesCall(json, placement), responsesDone]);
        return {
          provider: createOpenAIResponsesProvider({ client: openaiClient(server.url), strict }),
          echoed: () => followUp(server, "input", 1, "arguments"),
        };
      },
    },
  ]);
}

const otherCases: AdapterCase[] = [
  {
    name: "Anthropic tool_use input",
    placement: "value",
    async setup(json) {
      const server = await startServer([
        raw(
          `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"tool_use","id":"toolu_1","name":"probe","input":${json}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`,
        ),
        {
          body: {
            id: "msg_2",
            type: "message",
            role: "assistant",
            content: [{ type: "text", text: "done" }],
            stop_reason: "end_turn",
            usage: { input_tokens: 1, output_tokens: 1 },
          },
        },
      ]);
      return {
        provider: createAnthropicProvider({
          client: new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 }),
        }),
        echoed: () => followUp(server, "messages", 1, "content", 0, "input"),
      };
    },
  },
  {
    name: "Gemini functionCall args",
    placement: "value",
    async setup(json) {
      const server = await startServer([
        raw(
          `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"probe","args":${json}}}]},"finishReason":"STOP","index":0}],"responseId":"r1"}`,
        ),
        { body: { candidates: [{ content: { role: "model", parts: [{ text: "done" }] }, finishReason: "STOP" }] } },
      ]);
      return {
        provider: createGeminiProvider({
          client: new GoogleGenAI({ apiKey: "test", httpOptions: { baseUrl: server.url } }),
        }),
        echoed: () => followUp(server, "contents", 1, "parts", 0, "functionCall", "args"),
      };
    },
  },
  {
    name: "Ollama tool_calls arguments (streamed)",
    placement: "value",
    async setup(json) {
      const server = await startServer([
        ndjson(
          ollamaChunk(
            `{"role":"assistant","content":"","tool_calls":[{"function":{"name":"probe","arguments":${json}}}]}`,
            false,
          ) + ollamaChunk(`{"role":"assistant","content":""}`, true),
        ),
        ndjson(ollamaChunk(`{"role":"assistant","content":"done"}`, true)),
      ]);
      return {
        provider: createOllamaProvider({ client: new Ollama({ host: server.url }) }),
        echoed: () => followUp(server, "messages", 1, "tool_calls", 0, "function", "arguments"),
      };
    },
  },
  {
    name: "AI SDK tool-call input (JSON text, @ai-sdk/openai)",
    placement: "text",
    async setup(json) {
      const server = await startServer([chatCall(json, "text"), chatDone]);
      return {
        provider: createAISDKProvider({
          model: createOpenAI({ apiKey: "test", baseURL: `${server.url}/v1` }).chat("gpt-4o"),
        }),
        echoed: () => followUp(server, "messages", 1, "tool_calls", 0, "function", "arguments"),
      };
    },
  },
  {
    name: "AI SDK tool-call input (parsed object, hand-made model)",
    placement: "value",
    async setup(json) {
      const results = [
        {
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "probe", input: JSON.parse(json) as unknown }],
          finishReason: "tool-calls",
        },
        { content: [{ type: "text", text: "done" }], finishReason: "stop" },
      ];
      const calls: unknown[] = [];
      const model = {
        specificationVersion: "v2",
        modelId: "hand-made",
        doGenerate: async (options: unknown) => {
          calls.push(options);
          return results[calls.length - 1];
        },
      } as unknown as AISDKLanguageModelLike;
      return {
        provider: createAISDKProvider({ model }),
        // What the AI SDK provider would serialise: the prompt as handed over.
        echoed: () => JSON.parse(JSON.stringify(at(calls[1], "prompt", 1, "content", 0, "input"))),
      };
    },
  },
];

const cases: AdapterCase[] = [...openaiCases(false), ...openaiCases(true), ...otherCases];

const PROBE_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string" },
    unit: { type: "string" },
    nested: { type: "object", properties: { inner: { type: "object", properties: { x: { type: "string" } } } } },
    list: { type: "array", items: { type: "object", properties: { y: { type: "string" } } } },
    matrix: {
      type: "array",
      items: { type: "array", items: { type: "object", properties: { z: { type: "string" } } } },
    },
  },
};

/** A plain JSON-Schema tool (no zod: nothing rebuilds the arguments) that records what it gets. */
function probe() {
  const execute = vi.fn<Tool["execute"]>(() => "ok");
  const tool: Tool = { name: "probe", description: "Records its arguments.", parameters: PROBE_SCHEMA, execute };
  return { tool, execute };
}

/**
 * Keys a model may send to reach a prototype: at the top level, in a nested object, in an object
 * inside an array and inside an array of arrays, and in objects the schema does not describe.
 */
const HOSTILE =
  '{"__proto__":{"polluted":"top","city":"Lyon"},"constructor":{"prototype":{"polluted":"constructor"}},"prototype":{"polluted":"prototype"},"city":"Paris","nested":{"__proto__":{"polluted":"nested"},"inner":{"__proto__":{"polluted":"inner"},"x":"1"}},"list":[{"__proto__":{"polluted":"item"},"y":"2"}],"matrix":[[{"__proto__":{"polluted":"deep"},"z":"3"}]],"extra":{"__proto__":{"polluted":"unschematised"}}}';

/** Every object in `value` is a plain `{}` or array whose keys are own data properties, at any depth. */
function expectPlainJson(value: unknown, path = "args"): void {
  if (typeof value !== "object" || value === null) return;
  expect(Object.getPrototypeOf(value), `${path} has a polluted prototype`).toBe(
    Array.isArray(value) ? Array.prototype : Object.prototype,
  );
  for (const key of Reflect.ownKeys(value)) {
    if (Array.isArray(value) && key === "length") continue;
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    expect(descriptor !== undefined && "value" in descriptor, `${path}.${String(key)} is a data property`).toBe(true);
    expectPlainJson(descriptor?.value, `${path}.${String(key)}`);
  }
}

describe("toCallArguments", () => {
  const map = new Map([["a", 1]]);
  it.each<[string, unknown, unknown]>([
    ["an object as it is", { a: 1 }, { a: 1 }],
    ["absent as no arguments", undefined, {}],
    ["null as no arguments", null, {}],
    ["a string as it is (the loop parses it)", '{"a":1}', '{"a":1}'],
    ["an array as its JSON text", [1, "x"], '[1,"x"]'],
    ["a number as its JSON text", 3, "3"],
    ["a boolean as its JSON text", false, "false"],
    // Values no JSON parser gives (a custom client's): as they are, for the loop to refuse by type.
    ["a class instance as it is", map, map],
    ["NaN as it is (its JSON text would be null)", Number.NaN, Number.NaN],
    ["a bigint as it is", 1n, 1n],
  ])("passes %s", (_name, input, expected) => {
    expect(toCallArguments(input)).toStrictEqual(expected);
  });

  it("keeps the very object, prototype-named keys included", () => {
    const input = JSON.parse('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(toCallArguments(input)).toBe(input);
  });
});

describe("callArgumentsText", () => {
  it.each<[string, unknown, string]>([
    ["an object", { city: "Paris", n: [1] }, '{"city":"Paris","n":[1]}'],
    ["absent arguments", undefined, "{}"],
    ["null", null, "{}"],
    ["text, as it is", "{broken", "{broken"],
    ["an array", [1, 2], "[1,2]"],
    ["a value without JSON text", { big: 1n }, ""],
  ])("gives the JSON text of %s", (_label, input, expected) => {
    expect(callArgumentsText(input)).toBe(expected);
  });
});

describe("prototype keys in the model's arguments (D02)", () => {
  it.each(cases.map((adapter) => [adapter.name, adapter] as const))(
    "%s: the tool gets them as plain own data, at every depth",
    async (name, { setup, placement }) => {
      // Strict mode makes the model send null for optional fields; the adapter strips them by copying.
      const json = name.includes(", strict,") ? `{"unit":null,${HOSTILE.slice(1)}` : HOSTILE;
      const { tool, execute } = probe();

      const { provider, echoed } = await setup(json);
      const result = await runToolLoop({ provider, tools: registryOf(tool), maxIterations: 3 }, [
        { role: "user", content: "go" },
      ]);

      expect(result.messages[2]).toMatchObject({ role: "tool", content: "ok" });
      expect(result.content).toBe("done");
      expect(execute).toHaveBeenCalledTimes(1);
      const args = execute.mock.calls[0]?.[0] as Record<string, unknown>;
      expectPlainJson(args);
      // Nothing lost, nothing added: the very JSON the model sent (minus strict mode's null).
      expect(JSON.stringify(args)).toBe(HOSTILE);
      expect(Object.hasOwn(args, "__proto__")).toBe(true);
      expect(args.polluted).toBeUndefined();
      expect((args.nested as Record<string, unknown>).polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty("polluted");
      // The follow-up request sends the call back as the model made it: as text, the very text; as
      // a value, the arguments the tool got.
      const echo = echoed();
      if (typeof echo === "string") expect(echo).toBe(placement === "text" ? json : HOSTILE);
      else {
        expectPlainJson(echo, "echoed");
        expect(JSON.stringify(echo)).toBe(HOSTILE);
      }
    },
  );
});

describe("arguments that are not a JSON object (D07)", () => {
  it.each(
    cases.flatMap((adapter) =>
      (
        [
          ["[1,2]", "array"],
          ["3", "number"],
          ["true", "boolean"],
        ] as const
      ).map(([json, type]) => [adapter.name, json, type, adapter] as const),
    ),
  )("%s: %s → the model reads “got %s”, the tool does not run", async (_name, json, type, { setup }) => {
    const { tool, execute } = probe();

    const { provider } = await setup(json);
    const result = await runToolLoop({ provider, tools: registryOf(tool), maxIterations: 3 }, [
      { role: "user", content: "go" },
    ]);

    expect(execute).not.toHaveBeenCalled();
    expect(result.content).toBe("done");
    const answer = result.messages[2];
    expect(answer).toMatchObject({ role: "tool", toolName: "probe", isError: true });
    expect(answer?.content).toContain(`arguments for tool "probe" must be a JSON object, got ${type}`);
    // The transcript records what the model sent, not `{}`.
    const [call] = result.messages[1]?.toolCalls ?? [];
    expect((call as ToolCall).function?.arguments).toBe(json);
  });

  it.each(cases.filter(({ placement }) => placement === "value").map((adapter) => [adapter.name, adapter] as const))(
    "%s: null arguments mean no arguments: the tool runs with {}",
    async (_name, { setup }) => {
      const { tool, execute } = probe();

      const { provider } = await setup("null");
      await runToolLoop({ provider, tools: registryOf(tool), maxIterations: 3 }, [{ role: "user", content: "go" }]);

      expect(execute).toHaveBeenCalledTimes(1);
      expect(execute.mock.calls[0]?.[0]).toEqual({});
    },
  );
});

import { describe, expect, it } from "vitest";
import { portableLLMOptions, signalOption } from "../../../src/adapters/shared/request-options.js";
import type { Message } from "../../../src/index.js";
import { type RecordedBody, recordingAdapters } from "../../helpers/adapter-fixtures.js";

const at = (value: unknown, path: readonly string[]): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], value);

describe("portableLLMOptions", () => {
  const portable = (llmOptions: unknown, maxTokensField = "max_output_tokens") =>
    portableLLMOptions({ provider: "API", llmOptions, maxTokensField });

  it.each<[string, unknown, string, Record<string, unknown>]>([
    ["renames max_tokens to the API's field", { max_tokens: 9, temperature: 0 }, "cap", { cap: 9, temperature: 0 }],
    ["lets the API's own name win", { max_tokens: 9, cap: 4 }, "cap", { cap: 4 }],
    ["keeps max_tokens where it is the API's name", { max_tokens: 9 }, "max_tokens", { max_tokens: 9 }],
    ["drops an undefined max_tokens", { max_tokens: undefined }, "cap", {}],
    ["leaves out stream: false", { stream: false, top_p: 1 }, "cap", { top_p: 1 }],
    ["leaves out stream: undefined", { stream: undefined }, "cap", {}],
    ["reads anything else as no options", null, "cap", {}],
  ])("%s", (_name, llmOptions, field, expected) => {
    expect(portable(llmOptions, field)).toStrictEqual(expected);
  });

  it("returns a copy: the loop's options are not changed", () => {
    const llmOptions = Object.freeze({ max_tokens: 9, stream: false });
    expect(portable(llmOptions)).not.toBe(llmOptions);
    expect(llmOptions).toEqual({ max_tokens: 9, stream: false });
  });

  it.each<[unknown, string]>([
    [true, "true"],
    ["yes", '"yes"'],
    [{}, "{}"],
  ])("refuses stream: %j with the one TypeError wording", (stream, shown) => {
    const refuse = () => portable({ stream });
    expect(refuse).toThrow(TypeError);
    expect(refuse).toThrow(
      `API: llmOptions.stream must be false or absent (the adapter returns whole responses), got ${shown}`,
    );
  });
});

describe("signalOption", () => {
  it("is the signal in an object, or nothing without one", () => {
    const { signal } = new AbortController();
    expect(signalOption(signal)).toEqual({ signal });
    expect(signalOption(undefined)).toBeUndefined();
  });
});

/**
 * The table of `docs/adapters.md` ("`max_tokens` and `stream`"): where each adapter sends
 * `llmOptions.max_tokens`, the API's own name for it (which wins), and whether the request streams.
 */
const TABLE: Record<string, { cap: readonly string[]; own?: string; streams?: true }> = {
  "openai-chat": { cap: ["max_tokens"] },
  "openai-chat strict": { cap: ["max_tokens"] },
  "openai-responses": { cap: ["max_output_tokens"], own: "max_output_tokens" },
  "openai-responses strict": { cap: ["max_output_tokens"], own: "max_output_tokens" },
  anthropic: { cap: ["max_tokens"] },
  gemini: { cap: ["config", "maxOutputTokens"], own: "maxOutputTokens" },
  ollama: { cap: ["options", "num_predict"], own: "num_predict", streams: true },
  "ai-sdk": { cap: ["maxOutputTokens"], own: "maxOutputTokens" },
};

const messages: Message[] = [{ role: "user", content: "hi" }];

describe.each(recordingAdapters)("$name follows the max_tokens and stream table", (adapter) => {
  const rule = TABLE[adapter.name] as (typeof TABLE)[string];
  const send = async (llmOptions: Record<string, unknown>): Promise<RecordedBody> => {
    const { provider, requests } = adapter.create();
    await provider.chat(messages, undefined, "model", llmOptions);
    expect(requests).toHaveLength(1);
    return requests[0] as RecordedBody;
  };

  it("is in the table", () => {
    expect(TABLE).toHaveProperty([adapter.name]);
  });

  it("sends llmOptions.max_tokens as the API's own field", async () => {
    const request = await send({ max_tokens: 100 });
    expect(at(request, rule.cap)).toBe(100);
    if (rule.cap.at(-1) !== "max_tokens") {
      expect(request).not.toHaveProperty("max_tokens");
      expect(at(request, [...rule.cap.slice(0, -1), "max_tokens"])).toBeUndefined();
    }
  });

  it("accepts stream: false and sends no stream of its own making", async () => {
    const request = await send({ stream: false });
    expect(request.stream).toBe(rule.streams ?? undefined);
  });

  it.each([true, "yes"])("refuses stream: %j before sending anything", async (stream) => {
    const { provider, requests } = adapter.create();
    const chat = provider.chat(messages, undefined, "model", { stream });
    await expect(chat).rejects.toThrow(TypeError);
    await expect(chat).rejects.toThrow(
      `${adapter.provider}: llmOptions.stream must be false or absent (the adapter returns whole responses), got ${JSON.stringify(stream)}`,
    );
    expect(requests).toHaveLength(0);
  });
});

const renaming = recordingAdapters.filter((adapter) => TABLE[adapter.name]?.own !== undefined);

describe.each(renaming)("$name lets the API's own name win over max_tokens", (adapter) => {
  it("sends the API's own value", async () => {
    const { cap, own } = TABLE[adapter.name] as { cap: readonly string[]; own: string };
    const { provider, requests } = adapter.create();
    await provider.chat(messages, undefined, "model", { max_tokens: 100, [own]: 50 });
    expect(at(requests[0], cap)).toBe(50);
  });
});

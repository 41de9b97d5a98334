import { describe, expect, it } from "vitest";
import { tokenCount, usageInfo, usageOf } from "../../../src/adapters/shared/usage.js";

describe("tokenCount", () => {
  it.each<[unknown, number | undefined]>([
    [3, 3],
    [0, 0],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
    ["3", undefined],
    [null, undefined],
  ])("reads %j as %j", (value, expected) => {
    expect(tokenCount(value)).toBe(expected);
  });
});

describe("usageInfo", () => {
  it("takes a missing count as 0 and a missing total as the sum", () => {
    expect(usageInfo({ promptTokens: 4 })).toEqual({ promptTokens: 4, completionTokens: 0, totalTokens: 4 });
    expect(usageInfo({ promptTokens: 4, completionTokens: 2, totalTokens: 9 })).toEqual({
      promptTokens: 4,
      completionTokens: 2,
      totalTokens: 9,
    });
  });

  it("sets a detail count only when given, keeping a given 0 (issue 29)", () => {
    expect(usageInfo({ promptTokens: 4, cachedInputTokens: 3, reasoningTokens: 0 })).toStrictEqual({
      promptTokens: 4,
      completionTokens: 0,
      totalTokens: 4,
      cachedInputTokens: 3,
      reasoningTokens: 0,
    });
    expect(usageInfo({ promptTokens: 4, cacheWriteTokens: 2 })).toStrictEqual({
      promptTokens: 4,
      completionTokens: 0,
      totalTokens: 4,
      cacheWriteTokens: 2,
    });
  });
});

describe("usageOf", () => {
  const fields = { prompt: "input_tokens", completion: "output_tokens", total: "total_tokens" };

  it("reads the API's count fields", () => {
    expect(usageOf({ input_tokens: 5, output_tokens: 3, total_tokens: 10 }, fields)).toEqual({
      promptTokens: 5,
      completionTokens: 3,
      totalTokens: 10,
    });
    expect(usageOf({ input_tokens: 5 }, fields)).toEqual({ promptTokens: 5, completionTokens: 0, totalTokens: 5 });
  });

  it("sums the counts when the API has no total field", () => {
    expect(usageOf({ a: 1, b: 2, total_tokens: 9 }, { prompt: "a", completion: "b" })).toEqual({
      promptTokens: 1,
      completionTokens: 2,
      totalTokens: 3,
    });
  });

  it.each<[string, unknown]>([
    ["no object", undefined],
    ["an array", [1, 2]],
    ["no counts", { other: 1 }],
    ["counts that are not numbers", { input_tokens: "5" }],
  ])("is undefined for %s", (_name, record) => {
    expect(usageOf(record, fields)).toBeUndefined();
  });
});

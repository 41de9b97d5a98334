import { describe, expect, it } from "vitest";
import { fromJournal, toJournal } from "../../src/restate/journaled-tool-result.js";
import { errorResult, isToolResult, ToolResult } from "../../src/tool-result.js";

// What the journal keeps goes through JSON: a replay must see the same result the first run saw.
const roundTrip = (result: ToolResult) => fromJournal(JSON.parse(JSON.stringify(toJournal(result))));

describe("journaled tool results", () => {
  it("comes back from JSON as a real ToolResult with every field the loop reads", () => {
    const original = new ToolResult({
      forLLM: "for the model",
      forUser: "for the user",
      silent: true,
      async: false,
      responseHandled: true,
      data: { suggestions: ["a", "b"] },
      parts: [{ type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }],
    });
    const replayed = roundTrip(original);
    expect(replayed).toBeInstanceOf(ToolResult);
    expect(isToolResult(replayed)).toBe(true);
    expect(replayed).toEqual(original);
  });

  it("rebuilds err as an Error with the original message only", () => {
    class QuotaError extends Error {
      readonly code = "quota";
    }
    const original = errorResult("tool failed").withError(new QuotaError("quota exceeded", { cause: "upstream" }));
    const replayed = roundTrip(original);
    expect(replayed.isError).toBe(true);
    expect(replayed.forLLM).toBe("tool failed");
    expect(replayed.err).toBeInstanceOf(Error);
    expect(replayed.err?.constructor).toBe(Error);
    expect(replayed.err?.message).toBe("quota exceeded");
    expect(replayed.err?.cause).toBeUndefined();
  });

  it("leaves out what a result does not have", () => {
    const journaled = toJournal(new ToolResult({ forLLM: "ok" }));
    expect(journaled).toEqual({
      forLLM: "ok",
      forUser: "",
      silent: false,
      isError: false,
      async: false,
      responseHandled: false,
    });
    const replayed = fromJournal(journaled);
    expect([replayed.err, replayed.data, replayed.parts]).toEqual([undefined, undefined, undefined]);
  });
});

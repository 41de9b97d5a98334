import { describe, expect, it } from "vitest";
import * as z from "zod";
import { z as z3 } from "zod3";
import { type OutputSchema, runToolLoop } from "../src/index.js";
import { ScriptedProvider, textResponse } from "../src/testing/index.js";

const user = [{ role: "user" as const, content: "hi" }];

function run(output: unknown, extra: Record<string, unknown> = {}) {
  const provider = new ScriptedProvider([textResponse('"ok"')]);
  return runToolLoop({ provider, maxIterations: 1, output: output as OutputSchema, ...extra }, user);
}

describe("output and outputRetries are checked when the run starts", () => {
  it.each([
    ["a string", "schema", /runToolLoop: output must be a zod schema or \{ name, schema \}.*, got "schema"/],
    ["an array", [], /runToolLoop: output must be a zod schema or \{ name, schema \}/],
    [
      "a name with spaces",
      { name: "my output", schema: {} },
      /output\.name must be a string matching .*, got "my output"/,
    ],
    ["a name over 64 characters", { name: "n".repeat(65), schema: {} }, /output\.name must be a string matching/],
    ["no name", { schema: {} }, /output\.name must be a string matching .*, got undefined/],
    [
      "a schema that is not an object",
      { name: "out", schema: "string" },
      /output\.schema must be a JSON Schema object or a zod schema/,
    ],
    [
      "an invalid JSON Schema",
      { name: "out", schema: { type: "object", properties: 5 } },
      /runToolLoop: output\.schema cannot be compiled: schema is invalid/,
    ],
    ["a zod schema JSON Schema cannot express", z.date(), /runToolLoop: output cannot be converted to JSON Schema/],
    [
      "a named one",
      { name: "out", schema: z.date() },
      /runToolLoop: output\.schema cannot be converted to JSON Schema/,
    ],
  ])("output %s: a TypeError naming the option", async (_label, output, message) => {
    await expect(run(output)).rejects.toThrow(TypeError);
    await expect(run(output)).rejects.toThrow(message);
  });

  it.each([-1, 1.5, "1", Number.NaN, null])("outputRetries %s: a TypeError, with or without output", async (value) => {
    await expect(run(z.string(), { outputRetries: value })).rejects.toThrow(
      /runToolLoop: outputRetries must be an integer ≥ 0/,
    );
    const provider = new ScriptedProvider([textResponse("ok")]);
    await expect(runToolLoop({ provider, maxIterations: 1, outputRetries: value as number }, user)).rejects.toThrow(
      /runToolLoop: outputRetries must be an integer ≥ 0/,
    );
  });

  it.each([
    ["zod 4 string", z.string(), "ok"],
    ["zod 3 string", z3.string(), "ok"],
    ["JSON Schema string", { name: "text", schema: { type: "string" } }, "ok"],
  ])("any zod type or JSON Schema, not only objects (%s)", async (_label, output, value) => {
    const result = await run(output);
    expect(result.output).toBe(value);
  });
});

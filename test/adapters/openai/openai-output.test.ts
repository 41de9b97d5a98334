import { describe, expect, it } from "vitest";
import { toOpenAIStrictSchema } from "../../../src/adapters/openai/index.js";
import {
  openAIChatOutputFields,
  openAIResponsesOutputFields,
  streamWithoutOutputNulls,
  strictOutputSchema,
  withoutOutputNulls,
} from "../../../src/adapters/openai/openai-output.js";
import type { LLMResponse, LLMStreamPart } from "../../../src/index.js";

const schema = {
  type: "object",
  properties: {
    city: { type: "string" },
    units: { type: "string", enum: ["c", "f"] },
    note: { type: ["string", "null"] },
  },
  required: ["city"],
};
const output = { name: "Location", schema };
const answer = (content: string, toolCalls: LLMResponse["toolCalls"] = []): LLMResponse => ({
  content,
  toolCalls,
  finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
});

describe("strictOutputSchema", () => {
  it("is the strict conversion the tools get, computed once per schema object", () => {
    const strict = strictOutputSchema(output);
    expect(strict).toEqual(toOpenAIStrictSchema(schema));
    expect(strict).toMatchObject({ required: ["city", "units", "note"], additionalProperties: false });
    expect(strictOutputSchema({ name: "Other", schema })).toBe(strict);
  });
});

describe("the output request fields", () => {
  it("Chat: response_format json_schema with the name, the strict schema and strict: true", () => {
    expect(openAIChatOutputFields(output)).toEqual({
      response_format: {
        type: "json_schema",
        json_schema: { name: "Location", schema: toOpenAIStrictSchema(schema), strict: true },
      },
    });
  });

  it("Responses: text.format json_schema, keeping the caller's other text options", () => {
    expect(openAIResponsesOutputFields(output, { text: { verbosity: "low" } })).toEqual({
      text: {
        verbosity: "low",
        format: { type: "json_schema", name: "Location", schema: toOpenAIStrictSchema(schema), strict: true },
      },
    });
    expect(openAIResponsesOutputFields(output, {})).toMatchObject({ text: { format: { name: "Location" } } });
  });
});

describe("withoutOutputNulls", () => {
  it("removes the nulls strict mode made the model send for optional properties, keeping allowed nulls", () => {
    expect(withoutOutputNulls(answer('{"city":"Paris","units":null,"note":null}'), schema).content).toBe(
      '{"city":"Paris","note":null}',
    );
  });

  it("keeps the answer's raw text when nothing was removed, and leaves non-JSON, non-object and call turns alone", () => {
    const raw = answer('{ "city": "Paris",\n "note": null }');
    expect(withoutOutputNulls(raw, schema)).toBe(raw);
    for (const response of [
      answer("I'm very sorry, but I can't assist with that."),
      answer("[null]"),
      answer("null"),
      answer('{"city":null', []),
      answer('{"units":null}', [{ type: "function", name: "t", arguments: "{}" }]),
    ]) {
      expect(withoutOutputNulls(response, schema)).toBe(response);
    }
  });

  it("strips the streamed answer's last part only", async () => {
    async function* parts(): AsyncGenerator<LLMStreamPart> {
      yield { type: "text-delta", delta: '{"city":"Paris","units":null}' };
      yield { type: "response", response: answer('{"city":"Paris","units":null}') };
    }
    const seen: LLMStreamPart[] = [];
    for await (const part of streamWithoutOutputNulls(parts(), schema)) seen.push(part);
    expect(seen).toEqual([
      { type: "text-delta", delta: '{"city":"Paris","units":null}' },
      { type: "response", response: answer('{"city":"Paris"}') },
    ]);
  });
});

import { describe, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { z as z3 } from "zod3";
import {
  type InferOutput,
  type LLMProvider,
  resumeToolLoop,
  runToolLoop,
  streamToolLoop,
  type ToolLoopCheckpoint,
  type ToolLoopConfig,
  type ToolLoopResult,
} from "../src/index.js";

declare const provider: LLMProvider;
declare const checkpoint: ToolLoopCheckpoint;
const weather = z.object({
  city: z.string(),
  celsius: z.number().default(0),
  at: z.string().transform((s) => s.length),
});
type Weather = { city: string; celsius: number; at: number };

describe("result.output is typed from config.output", () => {
  it("a zod 4 schema: zod's output type (defaults and transforms applied)", async () => {
    const result = await runToolLoop({ provider, maxIterations: 3, output: weather }, []);
    expectTypeOf(result.output).toEqualTypeOf<Weather | undefined>();
    expectTypeOf(result).toEqualTypeOf<ToolLoopResult<Weather>>();
    // A wrong type fails.
    expectTypeOf(result.output).not.toEqualTypeOf<{ city: string } | undefined>();
  });

  it("a zod 3 schema: its _output", async () => {
    const schema = z3.object({ n: z3.number(), tags: z3.array(z3.string()).optional() });
    const result = await runToolLoop({ provider, maxIterations: 3, output: schema }, []);
    expectTypeOf(result.output).toEqualTypeOf<{ n: number; tags?: string[] | undefined } | undefined>();
  });

  it("{ name, schema } with a zod schema is typed from the schema; with a JSON Schema, unknown", async () => {
    const named = await runToolLoop({ provider, maxIterations: 3, output: { name: "w", schema: weather } }, []);
    expectTypeOf(named.output).toEqualTypeOf<Weather | undefined>();
    const json = await runToolLoop(
      { provider, maxIterations: 3, output: { name: "n", schema: { type: "object" } } },
      [],
    );
    expectTypeOf(json.output).toEqualTypeOf<unknown>();
  });

  it("no output, or a config typed ToolLoopConfig: unknown", async () => {
    const plain = await runToolLoop({ provider, maxIterations: 3 }, []);
    expectTypeOf(plain.output).toEqualTypeOf<unknown>();
    const config: ToolLoopConfig = { provider, maxIterations: 3 };
    expectTypeOf((await runToolLoop(config, [])).output).toEqualTypeOf<unknown>();
  });

  it("streamToolLoop and resumeToolLoop infer it too", async () => {
    const stream = streamToolLoop({ provider, maxIterations: 3, output: weather }, []);
    expectTypeOf((await stream.result).output).toEqualTypeOf<Weather | undefined>();
    const resumed = await resumeToolLoop({ provider, maxIterations: 3, output: z.array(z.number()) }, checkpoint);
    expectTypeOf(resumed.output).toEqualTypeOf<number[] | undefined>();
  });

  it("InferOutput", () => {
    expectTypeOf<InferOutput<typeof weather>>().toEqualTypeOf<Weather>();
    expectTypeOf<InferOutput<{ name: string; schema: Record<string, unknown> }>>().toEqualTypeOf<unknown>();
  });

  it("output takes only a schema; outputRetries a number", () => {
    // @ts-expect-error: a string is not a schema
    void runToolLoop({ provider, maxIterations: 3, output: "json" }, []);
    // @ts-expect-error: a name without a schema
    void runToolLoop({ provider, maxIterations: 3, output: { name: "x" } }, []);
    // @ts-expect-error: outputRetries is a number
    void runToolLoop({ provider, maxIterations: 3, output: weather, outputRetries: "1" }, []);
  });
});

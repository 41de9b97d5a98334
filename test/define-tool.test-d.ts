import { describe, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { z as z3 } from "zod3";
import {
  type DefinedTool,
  defineTool,
  newToolResult,
  type Tool,
  type ToolContext,
  type ToolResult,
} from "../src/index.js";

describe("defineTool infers args from the zod schema", () => {
  it("required, optional and defaulted fields (defaults make the output non-optional)", () => {
    defineTool({
      name: "weather",
      description: "d",
      parameters: z.object({
        city: z.string(),
        days: z.number().int().optional(),
        units: z.enum(["c", "f"]).default("c"),
      }),
      execute(args, context) {
        expectTypeOf(args).toEqualTypeOf<{ city: string; days?: number | undefined; units: "c" | "f" }>();
        expectTypeOf(args.units).toEqualTypeOf<"c" | "f">();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        // @ts-expect-error not in the schema
        args.country;
        return "ok";
      },
    });
  });

  it("transforms give the output type", () => {
    defineTool({
      name: "t",
      description: "d",
      parameters: z.object({
        count: z.string().transform((value) => value.length),
        when: z.iso.datetime().transform((value) => new Date(value)),
      }),
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<{ count: number; when: Date }>();
        return "ok";
      },
    });
  });

  it("nested objects and arrays", () => {
    defineTool({
      name: "t",
      description: "d",
      parameters: z.object({
        filter: z.object({ tags: z.array(z.string()), range: z.tuple([z.number(), z.number()]).optional() }),
        items: z.array(z.object({ id: z.string(), qty: z.number().default(1) })),
      }),
      execute(args) {
        expectTypeOf(args.filter.tags).toEqualTypeOf<string[]>();
        expectTypeOf(args.filter.range).toEqualTypeOf<[number, number] | undefined>();
        expectTypeOf(args.items).toEqualTypeOf<{ id: string; qty: number }[]>();
        return "ok";
      },
    });
  });

  it("execute returns a ToolResult or a string, possibly async", () => {
    const parameters = z.object({});
    defineTool({ name: "a", description: "d", parameters, execute: () => "text" });
    defineTool({ name: "b", description: "d", parameters, execute: async () => newToolResult("r") });
    // @ts-expect-error a number is not a ToolReturn
    defineTool({ name: "c", description: "d", parameters, execute: () => 42 });
    // @ts-expect-error parameters must be a zod object schema
    defineTool({ name: "d", description: "d", parameters: z.string(), execute: () => "" });
  });
});

describe("the returned tool", () => {
  const tool = defineTool({
    name: "weather",
    description: "d",
    parameters: z.object({ city: z.string(), units: z.enum(["c", "f"]).default("c") }),
    execute: ({ city }) => city,
  });

  it("keeps the inferred args type", () => {
    type Args = Parameters<typeof tool.execute>[0];
    expectTypeOf<Args>().toExtend<{ city: string; units: "c" | "f" }>();
    expectTypeOf<Args>().toHaveProperty("city").toEqualTypeOf<string>();
    expectTypeOf<Args>().toHaveProperty("units").toEqualTypeOf<"c" | "f">();
    expectTypeOf(tool).toExtend<DefinedTool<{ city: string; units: "c" | "f" }>>();
    expectTypeOf(tool.execute).parameter(1).toEqualTypeOf<ToolContext>();
    expectTypeOf(tool.execute).returns.toEqualTypeOf<ToolResult | Promise<ToolResult>>();
    // @ts-expect-error city must be a string
    tool.execute({ city: 1, units: "c" }, {} as ToolContext);
  });

  it("is assignable to Tool and can be registered", () => {
    expectTypeOf(tool).toExtend<Tool>();
    const tools: Tool[] = [tool];
    expectTypeOf(tools).toEqualTypeOf<Tool[]>();
  });
});

describe("defineTool infers args from a zod 3 (3.25+) schema too", () => {
  it("required, optional and defaulted fields, transforms", () => {
    defineTool({
      name: "weather",
      description: "d",
      parameters: z3.object({
        city: z3.string(),
        days: z3.number().int().optional(),
        units: z3.enum(["c", "f"]).default("c"),
        count: z3.string().transform((value) => value.length),
        filter: z3.object({ tags: z3.array(z3.string()) }),
      }),
      execute(args, context) {
        expectTypeOf(args).toEqualTypeOf<{
          city: string;
          days?: number | undefined;
          units: "c" | "f";
          count: number;
          filter: { tags: string[] };
        }>();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        // @ts-expect-error not in the schema
        args.country;
        return "ok";
      },
    });
  });

  it("needsApproval: a boolean or a predicate of the model's unparsed arguments (issue 12)", () => {
    const parameters = z.object({ path: z.string() });
    defineTool({ name: "d", description: "d", parameters, execute: () => "", needsApproval: true });
    defineTool({
      name: "d",
      description: "d",
      parameters,
      execute: () => "",
      needsApproval: async (args, context) => {
        // Not the schema's output: the predicate runs before validation.
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        return args.path !== "/tmp";
      },
    });
    // @ts-expect-error a boolean or a predicate
    defineTool({ name: "d", description: "d", parameters, execute: () => "", needsApproval: "yes" });
    // @ts-expect-error the predicate returns a boolean
    defineTool({ name: "d", description: "d", parameters, execute: () => "", needsApproval: () => "yes" });
    const tool = defineTool({ name: "d", description: "d", parameters, execute: () => "", needsApproval: true });
    expectTypeOf(tool.needsApproval).toEqualTypeOf<Tool["needsApproval"]>();
  });

  it("only an object schema is accepted", () => {
    // @ts-expect-error parameters must be a zod object schema
    defineTool({ name: "d", description: "d", parameters: z3.string(), execute: () => "" });
    // @ts-expect-error a refined zod 3 object is a ZodEffects, not an object schema
    defineTool({ name: "d", description: "d", parameters: z3.object({}).refine(() => true), execute: () => "" });
  });

  it("the returned tool keeps the inferred args type and the schema's type", () => {
    const parameters = z3.object({ city: z3.string(), units: z3.enum(["c", "f"]).default("c") });
    const tool = defineTool({ name: "weather", description: "d", parameters, execute: ({ city }) => city });
    expectTypeOf<Parameters<typeof tool.execute>[0]>().toHaveProperty("units").toEqualTypeOf<"c" | "f">();
    expectTypeOf(tool).toExtend<DefinedTool<{ city: string; units: "c" | "f" }>>();
    // (toEqualTypeOf's deep comparison cannot handle zod 3's recursive class types)
    expectTypeOf(tool.schema).toExtend<typeof parameters>();
    expectTypeOf(tool).toExtend<Tool>();
  });
});

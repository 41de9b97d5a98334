import { boundText, errorMessage, isPlainObject } from "./internal/describe.js";
import { compileJsonSchemaValidator } from "./internal/json-schema-validator.js";
import { optionError } from "./internal/options.js";
import type { OutputRequest } from "./provider.js";
import {
  type InferZod,
  type Zod3Schema,
  type ZodCheck,
  type ZodSchema,
  zodMajor,
  zodToJsonSchema,
  zodValidator,
} from "./zod-schema.js";

/** A named output schema: what a JSON Schema needs, and how a zod schema gets a name of its own. */
export interface NamedOutputSchema {
  /** The name providers are given (OpenAI's `json_schema.name` …), `/^[A-Za-z0-9_-]{1,64}$/`. */
  name: string;
  /** A JSON Schema (validated like tool arguments) or a zod schema (zod 4 or 3.25+). */
  schema: Record<string, unknown> | ZodSchema;
}

/**
 * What `ToolLoopConfig.output` takes: a zod schema (zod 4, or zod 3.25+; its name is `"output"`),
 * or a {@link NamedOutputSchema} `{ name, schema }`.
 */
export type OutputSchema = ZodSchema | NamedOutputSchema;

/** The type of `result.output` for an {@link OutputSchema}: zod's output type; `unknown` for a JSON Schema. */
export type InferOutput<Output> = Output extends { _zod: unknown } | Zod3Schema
  ? InferZod<Output>
  : Output extends { schema: infer Schema }
    ? InferZod<Schema>
    : unknown;

/** A run's `output`, checked: the request providers get, and the check of an answer. @internal */
export interface ResolvedOutput {
  /** `options.output` of every provider call. */
  request: OutputRequest;
  /** Parses an answer's text as JSON and validates it: its value, or one bounded line saying why not. */
  check(text: string): ZodCheck;
  /** How many times an invalid answer is fed back before the run rejects. */
  retries: number;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const DEFAULT_NAME = "output";
/** Longest text of a thrown error (JSON.parse's, a stack overflow's) in a problem line. */
const MAX_PROBLEM_CHARS = 300;

type Validate = (value: unknown) => ZodCheck;

// A zod schema is converted (and its validator made) once, whatever number of runs use it.
const converted = new WeakMap<object, { schema: Record<string, unknown>; validate: Validate }>();

/** A zod schema's JSON Schema and validator (made once). */
function fromZod(schema: ZodSchema, major: "zod4" | "zod3"): { schema: Record<string, unknown>; validate: Validate } {
  let done = converted.get(schema);
  if (done === undefined) {
    const jsonSchema = zodToJsonSchema(schema, major, false);
    done = { schema: jsonSchema, validate: zodValidator(schema, major, jsonSchema) };
    converted.set(schema, done);
  }
  return done;
}

/** Parses `text` as JSON and validates it; a failure (a throw included: a stack overflow) is a bounded line. */
function checkText(text: string, validate: Validate): ZodCheck {
  let problem = "the answer is not JSON";
  try {
    const value: unknown = JSON.parse(text);
    problem = "the answer could not be checked against the schema";
    return validate(value);
  } catch (error) {
    return { success: false, error: `${problem}: ${boundText(errorMessage(error), MAX_PROBLEM_CHARS)}` };
  }
}

/**
 * Checks a run's `output` and `outputRetries` (a `TypeError` naming the option) and makes what
 * the run needs of them; `undefined` without `output`.
 */
export function resolveOutput(where: string, output: unknown, outputRetries: unknown): ResolvedOutput | undefined {
  if (outputRetries !== undefined && !(Number.isSafeInteger(outputRetries) && (outputRetries as number) >= 0)) {
    throw optionError(where, "outputRetries", "an integer ≥ 0", outputRetries);
  }
  if (output === undefined) return undefined;
  let name = DEFAULT_NAME;
  let schema: unknown = output;
  let option = "output";
  if (zodMajor(output, false) === undefined) {
    if (!isPlainObject(output)) {
      throw optionError(where, option, "a zod schema or { name, schema } (a JSON Schema or a zod schema)", output);
    }
    ({ name, schema } = output as { name: string; schema: unknown });
    option = "output.schema";
    if (typeof name !== "string" || !NAME.test(name)) {
      throw optionError(where, "output.name", "a string matching /^[A-Za-z0-9_-]{1,64}$/", name);
    }
  }
  const major = zodMajor(schema, false);
  if (major === undefined && !isPlainObject(schema)) {
    throw optionError(where, option, "a JSON Schema object or a zod schema", schema);
  }
  let validate: Validate;
  try {
    if (major === undefined) validate = compileJsonSchemaValidator(schema as Record<string, unknown>) as Validate;
    else ({ schema, validate } = fromZod(schema as ZodSchema, major));
  } catch (error) {
    const problem = major === undefined ? "cannot be compiled" : "cannot be converted to JSON Schema";
    throw new TypeError(`${where}: ${option} ${problem}: ${errorMessage(error)}`, { cause: error });
  }
  return {
    request: { name, schema: schema as Record<string, unknown> },
    check: (text) => checkText(text, validate),
    retries: (outputRetries as number | undefined) ?? 1,
  };
}

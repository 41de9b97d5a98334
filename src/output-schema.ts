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

// A zod schema is converted (and its validator made) once, whatever number of runs use it.
const converted = new WeakMap<object, { schema: Record<string, unknown>; validate: (value: unknown) => ZodCheck }>();

/** A zod schema's JSON Schema and validator; a `TypeError` naming `option` when it cannot be converted. */
function fromZod(where: string, option: string, schema: ZodSchema, major: "zod4" | "zod3") {
  let done = converted.get(schema);
  if (done === undefined) {
    let jsonSchema: Record<string, unknown>;
    try {
      jsonSchema = zodToJsonSchema(schema, major, false);
    } catch (error) {
      throw new TypeError(`${where}: ${option} cannot be converted to JSON Schema: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    done = { schema: jsonSchema, validate: zodValidator(schema, major, jsonSchema) };
    converted.set(schema, done);
  }
  return done;
}

/** A JSON Schema's validator (the one tool arguments use); a `TypeError` when it cannot be compiled. */
function fromJsonSchema(where: string, schema: Record<string, unknown>): (value: unknown) => ZodCheck {
  let validate: (value: Record<string, unknown>) => ZodCheck;
  try {
    validate = compileJsonSchemaValidator(schema) as typeof validate;
  } catch (error) {
    throw new TypeError(`${where}: output.schema cannot be compiled: ${errorMessage(error)}`, { cause: error });
  }
  return validate as (value: unknown) => ZodCheck;
}

/** Parses `text` as JSON and validates it; a failure (a throw included: a stack overflow) is a bounded line. */
function checkText(text: string, validate: (value: unknown) => ZodCheck): ZodCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { success: false, error: `the answer is not JSON: ${boundText(errorMessage(error), MAX_PROBLEM_CHARS)}` };
  }
  try {
    return validate(value);
  } catch (error) {
    const why = boundText(errorMessage(error), MAX_PROBLEM_CHARS);
    return { success: false, error: `the answer could not be checked against the schema: ${why}` };
  }
}

/**
 * Checks a run's `output` and `outputRetries` (a `TypeError` naming the option) and makes what
 * the run needs of them; `undefined` without `output`.
 */
export function resolveOutput(where: string, output: unknown, outputRetries: unknown): ResolvedOutput | undefined {
  if (
    outputRetries !== undefined &&
    !(typeof outputRetries === "number" && Number.isSafeInteger(outputRetries) && outputRetries >= 0)
  ) {
    throw optionError(where, "outputRetries", "an integer ≥ 0", outputRetries);
  }
  if (output === undefined) return undefined;
  const expected = "a zod schema or { name, schema } (a JSON Schema or a zod schema)";
  let name = DEFAULT_NAME;
  let schema: unknown = output;
  let major = zodMajor(output, false);
  if (major === undefined) {
    if (!isPlainObject(output)) throw optionError(where, "output", expected, output);
    ({ name, schema } = output as { name: string; schema: unknown });
    if (typeof name !== "string" || !NAME.test(name)) {
      throw optionError(where, "output.name", "a string matching /^[A-Za-z0-9_-]{1,64}$/", name);
    }
    major = zodMajor(schema, false);
    if (major === undefined && !isPlainObject(schema)) {
      throw optionError(where, "output.schema", "a JSON Schema object or a zod schema", schema);
    }
  }
  let validate: (value: unknown) => ZodCheck;
  if (major === undefined) validate = fromJsonSchema(where, schema as Record<string, unknown>);
  else
    ({ schema, validate } = fromZod(where, output === schema ? "output" : "output.schema", schema as ZodSchema, major));
  return {
    request: { name, schema: schema as Record<string, unknown> },
    check: (text) => checkText(text, validate),
    retries: (outputRetries as number | undefined) ?? 1,
  };
}

import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ParseArgumentsResult } from "../tool.js";

const MAX_REPORTED_ISSUES = 8;

// One instance per draft, created on first use: Ajv's constructor is the expensive part.
let draft07: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

// Formats are annotations in standard JSON Schema (2019-09 onward), so they are not asserted;
// `strict: false` accepts the vendor keywords tool schemas often carry; Ajv never logs.
const OPTIONS = { allErrors: true, strict: false, validateFormats: false, logger: false } as const;

function ajvFor(schema: Record<string, unknown>): Ajv | Ajv2020 {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  if (dialect.includes("2020-12") || dialect.includes("2019-09")) {
    draft2020 ??= new Ajv2020(OPTIONS);
    return draft2020;
  }
  draft07 ??= new Ajv(OPTIONS);
  return draft07;
}

function isEmptySchema(schema: Record<string, unknown>): boolean {
  for (const key in schema) {
    if (key !== "type" && key !== "$schema" && key !== "description" && key !== "title") return false;
  }
  return true;
}

type ArgumentsValidator = (args: Record<string, unknown>) => ParseArgumentsResult;

// Compiling costs milliseconds: a schema object registered again (a registry per request, the same
// tool in several registries) reuses its validator.
const compiled = new WeakMap<object, ArgumentsValidator>();

const ACCEPT_ANY: ArgumentsValidator = (args: Record<string, unknown>): ParseArgumentsResult => ({
  success: true,
  data: args,
});

/**
 * Compiles a tool's JSON Schema once into an argument validator with standard semantics.
 * Throws (at registration) when the schema itself is invalid. Validators are cached per schema object.
 */
export function compileJsonSchemaValidator(schema: Record<string, unknown>): ArgumentsValidator {
  let validator = compiled.get(schema);
  if (validator !== undefined) return validator;
  if (isEmptySchema(schema)) {
    validator = ACCEPT_ANY;
  } else {
    const { $schema: _dialect, ...rest } = schema;
    const validate: ValidateFunction = ajvFor(schema).compile(rest);
    validator = (args) => {
      if (validate(args)) return { success: true, data: args };
      return { success: false, error: formatAjvErrors(validate.errors ?? []) };
    };
  }
  compiled.set(schema, validator);
  return validator;
}

function pointerToPath(pointer: string): string {
  if (pointer === "") return "";
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((path, segment) => {
      if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
      return path === "" ? segment : `${path}.${segment}`;
    }, "");
}

function joinPath(path: string, property: string): string {
  return path === "" ? property : `${path}.${property}`;
}

function formatAjvError(error: ErrorObject): string {
  const path = pointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") {
    return `${joinPath(path, String(params.missingProperty))}: required property is missing`;
  }
  if (error.keyword === "additionalProperties") {
    return `${joinPath(path, String(params.additionalProperty))}: unknown property is not allowed`;
  }
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    return `${path || "(root)"}: must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  return `${path || "(root)"}: ${error.message ?? error.keyword}`;
}

/** Turns validation issues into one line a model can act on, naming each property. */
export function formatIssues(issues: string[]): string {
  const shown = issues.slice(0, MAX_REPORTED_ISSUES).join("; ");
  const hidden = issues.length - MAX_REPORTED_ISSUES;
  return hidden > 0 ? `${shown}; … and ${hidden} more` : shown;
}

function formatAjvErrors(errors: ErrorObject[]): string {
  return formatIssues(errors.map(formatAjvError));
}

import { createRequire } from "node:module";
import type { Ajv, ErrorObject, Options, ValidateFunction } from "ajv";
import type { Ajv2019 } from "ajv/dist/2019.js";
import type { Ajv2020 } from "ajv/dist/2020.js";
import type { ParseArgumentsResult } from "../tool.js";

// Ajv (a CommonJS package) is loaded on the first JSON Schema compilation, not at import: it is
// the largest part of toolloop's start-up, and apps whose tools all use zod never need it.
const require = createRequire(import.meta.url);
type AjvClass = new (options: Options) => AnyAjv;
function loadAjv(dialect: Dialect): AjvClass {
  if (dialect === "2020-12") return (require("ajv/dist/2020.js") as { Ajv2020: AjvClass }).Ajv2020;
  if (dialect === "2019-09") return (require("ajv/dist/2019.js") as { Ajv2019: AjvClass }).Ajv2019;
  return (require("ajv") as { Ajv: AjvClass }).Ajv;
}

const MAX_REPORTED_ISSUES = 8;

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
type Dialect = "draft-07" | "2019-09" | "2020-12";

// Formats are annotations in standard JSON Schema (2019-09 onward), so they are not asserted;
// `strict: false` accepts the vendor keywords tool schemas often carry; Ajv never logs.
const OPTIONS = { allErrors: true, strict: false, validateFormats: false, logger: false } as const;

// Ajv keeps every schema it compiled (its code-generation scope only grows), so an instance is
// replaced after this many compilations; validators made by the old one keep working.
const COMPILATIONS_PER_INSTANCE = 200;
const instances = new Map<Dialect, { ajv: AnyAjv; compilations: number }>();

function dialectOf(schema: Record<string, unknown>): Dialect {
  const uri = typeof schema.$schema === "string" ? schema.$schema : "";
  if (uri.includes("2020-12")) return "2020-12";
  if (uri.includes("2019-09")) return "2019-09";
  return "draft-07";
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  const dialect = dialectOf(schema);
  let instance = instances.get(dialect);
  if (instance === undefined || instance.compilations >= COMPILATIONS_PER_INSTANCE) {
    const AjvForDialect = loadAjv(dialect);
    instance = { ajv: new AjvForDialect(OPTIONS), compilations: 0 };
    instances.set(dialect, instance);
  }
  instance.compilations++;
  const { $schema: _dialect, ...rest } = schema;
  const validate = instance.ajv.compile(rest);
  // Forget the schema at once, so that another tool may use the same `$id`.
  instance.ajv.removeSchema(rest);
  return validate;
}

function isEmptySchema(schema: Record<string, unknown>): boolean {
  for (const key in schema) {
    if (key !== "type" && key !== "$schema" && key !== "description" && key !== "title") return false;
  }
  return true;
}

type ArgumentsValidator = (args: Record<string, unknown>) => ParseArgumentsResult;

// Compiling costs milliseconds: a schema registered again (a registry per request, the same tool
// in several registries) reuses its validator, found by object or, bounded, by its JSON text.
const byObject = new WeakMap<object, ArgumentsValidator>();
const byText = new Map<string, ArgumentsValidator>();
const MAX_CACHED_TEXTS = 500;

const ACCEPT_ANY: ArgumentsValidator = (args: Record<string, unknown>): ParseArgumentsResult => ({
  success: true,
  data: args,
});

/**
 * Compiles a tool's JSON Schema once into an argument validator with standard semantics.
 * Throws (at registration) when the schema itself is invalid. Validators are cached per schema object.
 */
export function compileJsonSchemaValidator(schema: Record<string, unknown>): ArgumentsValidator {
  let validator = byObject.get(schema);
  if (validator !== undefined) return validator;
  if (isEmptySchema(schema)) {
    validator = ACCEPT_ANY;
  } else {
    const text = JSON.stringify(schema);
    validator = byText.get(text);
    if (validator === undefined) {
      const validate = compile(schema);
      validator = (args) => {
        if (validate(args)) return { success: true, data: args };
        return { success: false, error: formatAjvErrors(validate.errors ?? []) };
      };
      if (byText.size >= MAX_CACHED_TEXTS) byText.delete(byText.keys().next().value as string);
      byText.set(text, validator);
    }
  }
  byObject.set(schema, validator);
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

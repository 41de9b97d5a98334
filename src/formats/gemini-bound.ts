import { isPlainObject } from "../internal/describe.js";
import { type GeminiSchema, type GeminiSchemaType, typeOf } from "./gemini-schema.js";

// ─── A bound on what one conversion produces ────────────────────────────────────────────────────
//
// Gemini's schema has no references, so every `$ref` is expanded where it stands. A recursive
// reference is cut where it repeats on the path, but schemas whose definitions refer to each other
// still expand along every path that visits them in a new order: a 2 KB schema of 8 definitions
// that all refer to each other made 2.4 MB in 1.2 s, growing factorially beyond (a tool imported
// from an MCP server passes the registry's limits with it: validation checks a cycle once per
// level of the value, not once per path). So a conversion counts the characters it produces, as
// JSON, and stops at OUTPUT_CHARS_MIN or OUTPUT_CHARS_PER_INPUT_CHAR × the schema's own size,
// whichever is more. A schema that does not fit is converted again with fewer nested `$ref`
// expansions on one path (REF_DEPTHS), each attempt stopped at the bound too; the last one cuts
// whatever still does not fit. What is cut is sent as a loose schema saying so: the model sees
// less detail there, and the tool still checks its arguments against its full schema.

/** Characters (as JSON) any schema may take once converted. */
export const OUTPUT_CHARS_MIN = 100_000;
/** Characters a schema may take once converted, per character of the schema itself. */
export const OUTPUT_CHARS_PER_INPUT_CHAR = 4;
/** Most nested `$ref` expansions on one path, tried in turn until the conversion fits; then none. */
export const REF_DEPTHS = [Number.POSITIVE_INFINITY, 4, 3, 2, 1] as const;
/** Deepest nesting converted (Gemini's schemas are trees; a deeper part is cut). */
export const MAX_DEPTH = 100;
/** Values of a non-string `enum` listed in a description. */
export const MAX_ENUM_VALUES_SHOWN = 20;
/** Why a part is cut to keep the conversion within its bound. */
export const TOO_LARGE = "the tool's schema is too large to send expanded";
/** The description of a part cut to keep the conversion within its bound. */
export const SHORTENED = `not shown in full: ${TOO_LARGE}`;

/** Thrown (and caught) when an attempt is over the bound. */
export const OVER_BOUND = Symbol("over the output bound");

/** One conversion under way: where it is, and what it may still produce. */
export interface Context {
  root: Record<string, unknown>;
  /** `$ref`s being expanded on the current path: a repeat means a recursive schema. */
  expanding: Set<string>;
  /** Characters this conversion may still produce. */
  left: number;
  /** Most nested `$ref` expansions on one path in this attempt. */
  maxRefs: number;
  /** Nesting of the current node. */
  depth: number;
  /** The last attempt: it cuts what does not fit rather than give up. */
  last: boolean;
  /** `showValue` of a value already shown (a value reached through many references is read once). */
  shown: Map<unknown, string>;
}

/** Takes `chars` from the bound: `false` (or, in an attempt that may fail, a throw) once it is spent. */
export function spend(context: Context, chars: number): boolean {
  context.left -= chars;
  if (context.left >= 0) return true;
  if (!context.last) throw OVER_BOUND;
  return false;
}

/** Characters of one converted node as JSON, its subschemas excepted (they count themselves). */
export function ownChars(schema: GeminiSchema): number {
  let chars = 2;
  for (const [key, value] of Object.entries(schema)) {
    chars += key.length + 4;
    if (typeof value === "string") chars += value.length;
    else if (typeof value === "number") chars += 24;
    else if (Array.isArray(value)) for (const item of value) chars += typeof item === "string" ? item.length + 3 : 1;
    else if (key === "properties" && isPlainObject(value))
      for (const name of Object.keys(value)) chars += name.length + 4;
  }
  return chars;
}

/** The type a part cut from the conversion is sent with, when its schema names one plainly. */
export function cutType(node: unknown): GeminiSchemaType | undefined {
  if (!isPlainObject(node)) return undefined;
  const type = typeOf(node.type);
  if (type !== undefined) return type;
  if (isPlainObject(node.properties)) return "OBJECT";
  return node.items !== undefined || node.prefixItems !== undefined ? "ARRAY" : undefined;
}

/** What is sent for a part cut to keep the conversion within its bound. */
export function shortened(node: unknown, context: Context): GeminiSchema {
  const cut: GeminiSchema = {};
  const type = cutType(node);
  if (type !== undefined) cut.type = type;
  cut.description = SHORTENED;
  context.left -= ownChars(cut);
  return cut;
}

/** Input characters, roughly as JSON, each object counted once (a shared or cyclic object too). */
export function inputChars(schema: unknown): number {
  let chars = 0;
  const seen = new Set<object>();
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") chars += value.length + 2;
    else if (typeof value !== "object" || value === null) chars += 4;
    else if (!seen.has(value)) {
      seen.add(value);
      chars += 2;
      if (Array.isArray(value)) for (const item of value) stack.push(item);
      else {
        for (const key of Object.keys(value)) {
          chars += key.length + 3;
          stack.push((value as Record<string, unknown>)[key]);
        }
      }
    }
  }
  return chars;
}

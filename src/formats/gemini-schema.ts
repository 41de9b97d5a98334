/** Gemini's `Schema` types, and JSON Schema's type names in them. */

/** A type of Gemini's `Schema`, upper-case as the official SDK sends it. */
export type GeminiSchemaType = "STRING" | "NUMBER" | "INTEGER" | "BOOLEAN" | "ARRAY" | "OBJECT";

/** The subset of OpenAPI 3.0 that Gemini's `FunctionDeclaration.parameters` accepts. */
export interface GeminiSchema {
  /** The value's type; absent for "any value". */
  type?: GeminiSchemaType;
  /** What the value means, for the model (constraints Gemini cannot express are appended here). */
  description?: string;
  /** Only `"enum"`/`"date-time"` for strings, `"int32"`/`"int64"` for integers, `"float"`/`"double"` for numbers. */
  format?: string;
  /** `true` when `null` is allowed too. */
  nullable?: boolean;
  /** String values only. */
  enum?: string[];
  /** An object's properties by name. */
  properties?: Record<string, GeminiSchema>;
  /** The names of an object's properties that must be present. */
  required?: string[];
  /** The schema of an array's items. */
  items?: GeminiSchema;
  /** The value matches at least one of these schemas. */
  anyOf?: GeminiSchema[];
  /** int64 counts are strings, as in the API's JSON (and the SDK's types). */
  minItems?: string;
  /** Most items of an array (int64 as a string). */
  maxItems?: string;
  /** Fewest characters of a string (int64 as a string). */
  minLength?: string;
  /** Most characters of a string (int64 as a string). */
  maxLength?: string;
  /** Fewest properties of an object (int64 as a string). */
  minProperties?: string;
  /** Most properties of an object (int64 as a string). */
  maxProperties?: string;
  /** Smallest allowed number (inclusive). */
  minimum?: number;
  /** Largest allowed number (inclusive). */
  maximum?: number;
  /** A regular expression a string must match. */
  pattern?: string;
}

/** One entry of Gemini's `tools: [{ functionDeclarations }]`. */
export interface GeminiFunctionDeclaration {
  /** The tool's name, as the model calls it. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** Absent for a tool without parameters (Gemini rejects an `OBJECT` with no properties there). */
  parameters?: GeminiSchema;
}

/** JSON Schema type names → Gemini's. */
const TYPES: Readonly<Record<string, GeminiSchemaType>> = {
  string: "STRING",
  number: "NUMBER",
  integer: "INTEGER",
  boolean: "BOOLEAN",
  array: "ARRAY",
  object: "OBJECT",
};

/** Gemini's name of a JSON Schema type name, or `undefined`. */
export function typeOf(value: unknown): GeminiSchemaType | undefined {
  return typeof value === "string" && Object.hasOwn(TYPES, value) ? TYPES[value] : undefined;
}

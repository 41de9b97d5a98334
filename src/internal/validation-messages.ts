import type { ErrorObject } from "ajv";
import { boundText, cutName, jsonText, MAX_VALIDATION_MESSAGE_CHARS, quoteName } from "./describe.js";
import { unescapePointerSegment } from "./json-pointer.js";

// ─── Messages ───────────────────────────────────────────────────────────────────────────────────

const MAX_REPORTED_ISSUES = 8;
/** Longest single issue: one long issue must not crowd the others out of the message. */
const MAX_ISSUE_CHARS = 400;
/** How many of an enum's allowed values a message lists. */
const MAX_ENUM_VALUES_SHOWN = 10;
/** Longest property name (often the model's own) or allowed value echoed in a message. */
const MAX_ENUM_VALUE_CHARS = 40;
/** Longest schema pattern quoted in a registration error. */

function showAllowedValue(value: unknown): string {
  const text = typeof value === "string" ? value : (jsonText(value) ?? String(value));
  const cut = text.length > MAX_ENUM_VALUE_CHARS ? `${text.slice(0, MAX_ENUM_VALUE_CHARS)}…` : text;
  return typeof value === "string" ? JSON.stringify(cut) : cut;
}

function pointerToPath(pointer: string): string {
  if (pointer === "") return "";
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => cutName(unescapePointerSegment(segment)))
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
    return `${joinPath(path, cutName(String(params.missingProperty)))}: required property is missing`;
  }
  if (error.keyword === "additionalProperties") {
    return `${joinPath(path, cutName(String(params.additionalProperty)))}: unknown property is not allowed`;
  }
  const where =
    error.propertyName === undefined
      ? path || "(root)"
      : `${path || "(root)"}: property name ${quoteName(error.propertyName)}`;
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    const allowed = params.allowedValues;
    const shown = allowed.slice(0, MAX_ENUM_VALUES_SHOWN).map(showAllowedValue).join(", ");
    const more = allowed.length - MAX_ENUM_VALUES_SHOWN;
    return `${where}: must be one of ${shown}${more > 0 ? `, … and ${more} more` : ""}`;
  }
  return `${where}: ${error.message ?? error.keyword}`;
}

/**
 * The line a model reads: at most {@link MAX_REPORTED_ISSUES} issues, each bounded, then how many
 * more there were; at most `MAX_VALIDATION_MESSAGE_CHARS` in all, with a marker saying how much
 * was cut.
 */
function issueLine(shown: readonly string[], total: number): string {
  const text = shown.map((issue) => boundText(issue, MAX_ISSUE_CHARS)).join("; ");
  const hidden = total - shown.length;
  const suffix = hidden > 0 ? `; … and ${hidden} more` : "";
  return `${boundText(text, MAX_VALIDATION_MESSAGE_CHARS - suffix.length)}${suffix}`;
}

/**
 * Turns validation issues (JSON Schema's or zod's) into one line a model can act on, naming each
 * property: the first 8 issues, then how many more there were. Each issue and the whole line are
 * bounded (at most 1,000 characters), with a marker saying how many characters were cut.
 */
export function formatIssues(issues: readonly string[]): string {
  return issueLine(issues.slice(0, MAX_REPORTED_ISSUES), issues.length);
}

/** The line a model reads for Ajv's errors (see {@link formatIssues}). */
export function formatAjvErrors(errors: readonly ErrorObject[]): string {
  // `propertyNames` adds a vaguer error ("property name must be valid") after the specific ones.
  const relevant = errors.filter((error) => error.keyword !== "propertyNames");
  const issues = (relevant.length > 0 ? relevant : errors).slice(0, MAX_REPORTED_ISSUES).map(formatAjvError);
  return issueLine(issues, relevant.length > 0 ? relevant.length : errors.length);
}

// The structure baseline: scripts/structure-baseline.json records the structural violations src/
// had when their rules arrived (import circles, src/internal/ or the contract importing above the
// contract, long functions, long files), so that scripts/check-imports.mjs can enforce those rules
// in every `npm test` while the refactors that remove them are under way. The check reports what the
// baseline does not cover (a new violation) and each entry that covers nothing any more (a stale
// entry): the list can only shrink, and it is empty once the refactors have landed.
// `node scripts/check-imports.mjs --shrink-baseline` rewrites the entries to what they still cover
// (it never adds one); `--no-baseline` lists every violation.
//
// An entry covers a violation when every field of the violation's record matches it: a string is
// equal (the rule, the file), a number is at most the entry's (a length is a ceiling), a list is a
// subset of the entry's (a circle that loses a file is still the circle the baseline knows).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/** Where the baseline lives, relative to the repository root. */
export const BASELINE_FILE = "scripts/structure-baseline.json";

const ABOUT =
  "Structural violations src/ had when their rules arrived (docs/architecture.md): scripts/check-imports.mjs reports only what this list does not cover, and fails on an entry that no longer occurs. Never add an entry: fix the code. `node scripts/check-imports.mjs --shrink-baseline` tightens the list after a fix.";

/** @typedef {Record<string, string | number | string[]> & { rule: string }} BaselineEntry */
/** @typedef {{ file: string, line: number, rule: string, message: string, baseline?: BaselineEntry }} Violation */

/**
 * The baseline's entries under `root`, each with the line where it starts; none without a file.
 * @param {string} root
 * @returns {{ entries: BaselineEntry[], lines: number[] }}
 */
export function readBaseline(root) {
  const path = join(root, BASELINE_FILE);
  if (!existsSync(path)) return { entries: [], lines: [] };
  const text = readFileSync(path, "utf8");
  const parsed = JSON.parse(text);
  if (!Array.isArray(parsed?.violations)) throw new Error(`${BASELINE_FILE}: expected { "violations": [ … ] }`);
  // TypeScript's JSON parser keeps positions: where each entry is written, for a stale entry's line.
  const tree = ts.parseJsonText(path, text);
  const document = tree.statements[0]?.expression;
  const list = document?.properties?.find((property) => property.name?.text === "violations")?.initializer;
  const lines = (list?.elements ?? []).map(
    (element) => tree.getLineAndCharacterOfPosition(element.getStart(tree)).line + 1,
  );
  return { entries: parsed.violations, lines };
}

/**
 * Whether `entry` covers the violation recorded as `record`.
 * @param {BaselineEntry} entry
 * @param {BaselineEntry} record
 */
export function covers(entry, record) {
  return Object.entries(record).every(([field, value]) => {
    const allowed = entry[field];
    if (Array.isArray(value)) return Array.isArray(allowed) && value.every((item) => allowed.includes(item));
    if (typeof value === "number") return typeof allowed === "number" && value <= allowed;
    return allowed === value;
  });
}

const key = (entry) => JSON.stringify(entry);

/**
 * Whether `entry` is about the same thing as `record` without covering it: the same rule, file and
 * function (its strings), and a list that shares an item — a length over its ceiling, a circle that
 * took in a file.
 */
const related = (entry, record) =>
  Object.entries(record).every(([field, value]) => {
    const listed = entry[field];
    if (Array.isArray(value)) return Array.isArray(listed) && value.some((item) => listed.includes(item));
    return typeof value === "number" || listed === value;
  });

/**
 * Applies the baseline to `violations`: drops those an entry covers; one an entry is related to but
 * does not cover (it grew) names the entry in its message; an entry that covers nothing and relates
 * to nothing becomes a `stale-baseline` violation at its line. Violations without a `baseline`
 * record pass through.
 * @param {Violation[]} violations
 * @param {{ entries: BaselineEntry[], lines: number[] }} baseline as {@link readBaseline} reads it
 * @returns {{ violations: Violation[], suppressed: number, shrunk: BaselineEntry[] | undefined }}
 *   `suppressed`: how many it covered; `shrunk`: the entries tightened to the violations they
 *   cover, when that differs from the baseline
 */
export function applyBaseline(violations, baseline) {
  const remaining = [];
  const known = [];
  const grown = [];
  for (const violation of violations) {
    const record = violation.baseline;
    if (record === undefined) {
      remaining.push(violation);
    } else if (baseline.entries.some((entry) => covers(entry, record))) {
      known.push(record);
    } else {
      const entry = baseline.entries.find((candidate) => related(candidate, record));
      if (entry !== undefined) grown.push(record);
      remaining.push(
        entry === undefined
          ? violation
          : {
              ...violation,
              message: `${violation.message} (${BASELINE_FILE} lists ${inline(entry)}: it may only shrink)`,
            },
      );
    }
  }
  for (const [index, entry] of baseline.entries.entries()) {
    if (known.some((record) => covers(entry, record)) || grown.some((record) => related(entry, record))) continue;
    remaining.push({
      file: BASELINE_FILE,
      line: baseline.lines[index] ?? 1,
      rule: "stale-baseline",
      message: `${inline(entry)} no longer occurs: delete the entry (or run the check with --shrink-baseline)`,
    });
  }
  const tightened = sortEntries([...new Map(known.map((record) => [key(record), record])).values()]);
  const changed = key(tightened) !== key(sortEntries(baseline.entries));
  return { violations: remaining, suppressed: known.length, shrunk: changed ? tightened : undefined };
}

const sortEntries = (entries) =>
  [...entries].sort((a, b) => a.rule.localeCompare(b.rule) || key(a).localeCompare(key(b)));

const WIDTH = 120; // biome.json's lineWidth: the file is written as `biome format` would leave it

/** A JSON value on one line, spaced as Biome writes it. */
function inline(value) {
  if (Array.isArray(value)) return `[${value.map(inline).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{ ${Object.entries(value)
      .map(([field, item]) => `${JSON.stringify(field)}: ${inline(item)}`)
      .join(", ")} }`;
  return JSON.stringify(value);
}

/**
 * A JSON value on a line indented by `indent`, after `lead` characters and followed by `after`: on
 * one line if that fits, else one item a line.
 */
function layout(value, indent, lead, after) {
  const flat = inline(value);
  if (value === null || typeof value !== "object" || indent + lead + flat.length + after.length <= WIDTH)
    return flat + after;
  const inner = " ".repeat(indent + 2);
  const comma = (index, all) => (index < all.length - 1 ? "," : "");
  const items = Array.isArray(value)
    ? value.map((item, index) => inner + layout(item, indent + 2, 0, comma(index, value)))
    : Object.entries(value).map(([field, item], index, all) => {
        const name = `${JSON.stringify(field)}: `;
        return inner + name + layout(item, indent + 2, name.length, comma(index, all));
      });
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return `${open}\n${items.join("\n")}\n${" ".repeat(indent)}${close}${after}`;
}

/**
 * Writes `entries` as the baseline of `root`: an entry a line where it fits.
 * @param {string} root
 * @param {BaselineEntry[]} entries
 */
export function writeBaseline(root, entries) {
  const sorted = sortEntries(entries);
  const body = sorted.map((entry, index) => `    ${layout(entry, 4, 0, index < sorted.length - 1 ? "," : "")}`);
  const text = `{\n  "$comment": ${JSON.stringify(ABOUT)},\n  "violations": [${body.length === 0 ? "" : `\n${body.join("\n")}\n  `}]\n}\n`;
  writeFileSync(join(root, BASELINE_FILE), text);
}

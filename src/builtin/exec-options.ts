import { realpathSync } from "node:fs";
import { isValidTimeout, TIMEOUT_EXPECTATION } from "../execute-tool-call.js";
import { checkCount, checkMetadata, optionError } from "../internal/options.js";
import { type CommandPatterns, copyPattern } from "./command-guard.js";
import type { WorkspaceOptions } from "./workspace.js";

// The options of `execute_bash` (createExecTool), checked once at creation into the settings every
// call reads.

/** Options of {@link createExecTool}: the workspace, and how commands run. */
export interface ExecToolOptions extends WorkspaceOptions {
  /** The tool's name, as the model calls it. @default "execute_bash" */
  name?: string;
  /**
   * How long a call may take, in milliseconds, the workspace check before the run included; then
   * every process of the command is killed (its session, see docs/builtin-tools.md) and the result
   * is `command timed out after Ns` with the output so far. `Infinity` for none. @default 30000
   */
  timeoutMs?: number;
  /** Longest output the model reads; the rest is cut with `... (truncated, N more chars)`. @default 10000 */
  maxOutputChars?: number;
  /**
   * Refuse commands that match any of these, in addition to the default deny list (never
   * instead). Matched, case-insensitively, on the normalised command (lower case, quotes and
   * backslashes removed, see docs/builtin-tools.md). They run on V8's backtracking engine on a hostile command of up to
   * 8,192 characters: keep them free of nested quantifiers. A pattern that throws refuses.
   */
  denyPatterns?: RegExp[];
  /**
   * When given (not empty), every simple command of a command must match one of these, or it is
   * refused. Checked after the deny lists, which still apply to allowed commands.
   */
  allowPatterns?: RegExp[];
  /**
   * Extra environment variables for the command. The command never sees this process's
   * environment: only `PATH`, `HOME` (the workspace) and these (which may replace those two).
   */
  env?: Record<string, string>;
}

export const WHERE = "createExecTool";
export const DEFAULT_NAME = "execute_bash";
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_OUTPUT_CHARS = 10_000;
/** `PATH` of the command when this process has none. */
const FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin";

/** The options of {@link createExecTool} as every call reads them: checked, copied, with their defaults. */
export interface ExecSettings {
  readonly workspace: WorkspaceOptions;
  /** The workspace's real path: whose turns its commands take (see workspace-turns.ts). */
  readonly turnKey: string;
  readonly restricted: boolean;
  readonly timeoutMs: number;
  readonly maxOutputChars: number;
  readonly patterns: CommandPatterns;
  readonly env: Readonly<Record<string, string>>;
}

function checkPatterns(option: string, value: unknown): RegExp[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw optionError(WHERE, option, "an array of RegExp", value);
  return value.map((pattern: unknown, index) => {
    if (!(pattern instanceof RegExp)) throw optionError(WHERE, `${option}[${index}]`, "a RegExp", pattern);
    try {
      return copyPattern(pattern);
    } catch {
      throw optionError(WHERE, `${option}[${index}]`, "a RegExp", pattern);
    }
  });
}

export function execSettings(options: ExecToolOptions): ExecSettings {
  const { timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  if (!isValidTimeout(timeoutMs)) throw optionError(WHERE, "timeoutMs", TIMEOUT_EXPECTATION, timeoutMs);
  const extra = checkMetadata(WHERE, "env", options.env) ?? {};
  // A null-prototype object: a key such as `__proto__` is an ordinary variable name here.
  const env: Record<string, string> = Object.create(null);
  env.PATH = process.env.PATH ?? FALLBACK_PATH;
  env.HOME = options.workspace;
  for (const [key, value] of Object.entries(extra)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw optionError(WHERE, `env[${JSON.stringify(key)}]`, "an environment variable name", key);
    }
    if (value.includes("\0")) throw optionError(WHERE, `env.${key}`, "a string without NUL", value);
    env[key] = value;
  }
  // A copy: the caller changing its options object later changes nothing here.
  const workspace: WorkspaceOptions = {
    workspace: options.workspace,
    restrictToWorkspace: options.restrictToWorkspace !== false,
  };
  if (options.allowReadPaths !== undefined) workspace.allowReadPaths = [...options.allowReadPaths];
  if (options.allowWritePaths !== undefined) workspace.allowWritePaths = [...options.allowWritePaths];
  let turnKey = options.workspace;
  try {
    turnKey = realpathSync(options.workspace);
  } catch {
    // checkWorkspaceOptions found it a directory a moment ago: keep the path as given
  }
  return {
    workspace: Object.freeze(workspace),
    turnKey,
    restricted: workspace.restrictToWorkspace === true,
    timeoutMs,
    maxOutputChars: checkCount(WHERE, "maxOutputChars", options.maxOutputChars, DEFAULT_MAX_OUTPUT_CHARS),
    patterns: {
      deny: checkPatterns("denyPatterns", options.denyPatterns),
      allow: checkPatterns("allowPatterns", options.allowPatterns),
    },
    env,
  };
}

/** `30000` → `"30s"`, `300` → `"0.3s"`. */
export function seconds(ms: number): string {
  return ms === Number.POSITIVE_INFINITY ? "no time limit" : `${Number((ms / 1000).toFixed(3))}s`;
}

import { quoteName } from "../internal/describe.js";
import { checkString } from "../internal/options.js";
import type { Tool, ToolContext } from "../tool.js";
import { errorResult, type ToolResult } from "../tool-result.js";
import {
  ABORTED_BEFORE_START,
  type Check,
  CheckBudget,
  CheckStopped,
  MAX_CHECK_OPERATIONS,
  stoppedMessage,
} from "./check-budget.js";
import { type ArchiveExtraction, archiveExtractions, checkCommand } from "./command-guard.js";
import { run } from "./command-run.js";
import { DEFAULT_NAME, type ExecSettings, type ExecToolOptions, execSettings, seconds, WHERE } from "./exec-options.js";
import { checkOperands } from "./operand-check.js";
import { checkWorkspaceOptions, PathLookups, resolveWorkspacePath } from "./workspace.js";
import { takeTurn } from "./workspace-turns.js";

export type { ExecToolOptions } from "./exec-options.js";

// The `execute_bash` tool: each call's command checked (command-guard.ts; in restricted mode its
// paths too, operand-check.ts, within a budget, check-budget.ts), then run (command-run.ts).

/**
 * The `execute_bash` tool (picoclaw's `ExecTool`): `{ command, working_directory? }` runs
 * `sh -c command` in a session of its own (every process of which is killed when the call ends),
 * in the workspace (or `working_directory` inside it), with a minimal environment. The result is
 * stdout, then `STDERR:` and stderr, cut at `maxOutputChars`; a non-zero exit, a timeout, an
 * abort and every refusal (deny list, allow list, a path outside the workspace) are error results.
 * A deny list is not a sandbox: see docs/builtin-tools.md, and run untrusted models in a container.
 * @throws TypeError for a bad option (echoing it)
 * @example
 * ```ts
 * registry.register(createExecTool({ workspace: "/srv/agent/workspace", timeoutMs: 10_000 }));
 * ```
 */
export function createExecTool(options: ExecToolOptions): Tool {
  checkWorkspaceOptions(options, WHERE);
  const name = checkString(WHERE, "name", options.name) ?? DEFAULT_NAME;
  const settings = execSettings(options);
  return Object.freeze({
    name,
    description:
      "Run a shell command (sh -c) in the workspace and return its output (stdout, then STDERR:). " +
      `Times out after ${seconds(settings.timeoutMs)}; background processes are killed when it ends. ` +
      "Dangerous commands (rm -rf, sudo, curl | sh, $(...), heredocs, ...) are refused" +
      (settings.restricted
        ? ", and so are paths outside the workspace (absolute paths, '..') and values the shell computes " +
          "as it runs ($variables other than $HOME and $PWD, xargs): write paths out literally."
        : "."),
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The shell command to run" },
        working_directory: {
          type: "string",
          description: "Optional: the directory to run it in, relative to the workspace (default: the workspace)",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    execute: (args: Record<string, unknown>, context: ToolContext) => execute(settings, args, context),
  });
}

async function execute(
  settings: ExecSettings,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolResult> {
  const { command, working_directory: directory } = args;
  if (typeof command !== "string" || command.trim() === "") return errorResult("command is empty: nothing to run");
  const refusal = checkCommand(command, settings.patterns);
  if (refusal !== undefined) return errorResult(refusal);
  if (directory !== undefined && typeof directory !== "string") {
    return errorResult("working_directory must be a string");
  }
  // The time limit covers the checks before the run too: together they take at most timeoutMs.
  const budget = new CheckBudget(MAX_CHECK_OPERATIONS, settings.timeoutMs, context.signal);
  // One cache of lookups for the whole check: a path component is read once however many words share it.
  const check: Check = {
    budget,
    lookups: new PathLookups(
      () => budget.spend(),
      () => budget.step(),
    ),
  };
  const extractions = settings.restricted ? archiveExtractions(command) : [];
  // In restricted mode, an extraction's check and run never overlap another command's (see workspace-turns.ts).
  const turn = settings.restricted ? takeTurn(settings.turnKey, extractions.length > 0) : undefined;
  try {
    let prepared: { cwd: string } | string;
    try {
      if (turn !== undefined && !turn.held) {
        try {
          await budget.race(turn.granted);
        } catch (error) {
          if (!(error instanceof CheckStopped) || error.reason !== "timeout") throw error;
          return errorResult(
            `command timed out after ${seconds(settings.timeoutMs)} while it waited for an archive extraction in the ` +
              "workspace, or for the commands running when it started, to end; nothing ran",
          );
        }
      }
      prepared = await budget.race(prepare(settings, command, directory, extractions, check));
    } catch (error) {
      if (!(error instanceof CheckStopped)) throw error;
      return errorResult(stoppedMessage(error.reason, settings.timeoutMs));
    } finally {
      budget.dispose();
    }
    if (typeof prepared === "string") return errorResult(prepared);
    if (context.signal.aborted) return errorResult(ABORTED_BEFORE_START);
    const left = budget.remainingMs();
    if (left <= 0) return errorResult(stoppedMessage("timeout", settings.timeoutMs));
    return await run(settings, command, prepared.cwd, context, left);
  } finally {
    // Ends the turn, or the wait for it.
    turn?.end();
  }
}

/** The working directory of the command, or why it may not run (a refusal the model reads). */
async function prepare(
  settings: ExecSettings,
  command: string,
  directory: string | undefined,
  extractions: readonly ArchiveExtraction[],
  check: Check,
): Promise<{ cwd: string } | string> {
  let cwd = settings.workspace.workspace;
  if (directory !== undefined && directory !== "") {
    // Like an operand: the command may read or write there.
    const resolved = await resolveWorkspacePath(settings.workspace, directory, "read", check.lookups);
    if (!resolved.ok) return `working_directory ${quoteName(directory)}: ${resolved.error}`;
    const writable = await resolveWorkspacePath(settings.workspace, resolved.path, "write", check.lookups);
    if (!writable.ok) return `working_directory ${quoteName(directory)}: ${writable.error}`;
    // A real path (no symlink left): what it is was read while resolving it.
    if ((await check.lookups.entry(resolved.path)).kind !== "directory") {
      return `working_directory ${quoteName(directory)} is not a directory`;
    }
    cwd = resolved.path;
  }
  if (settings.restricted) {
    const outside = await checkOperands(settings, command, cwd, extractions, check);
    if (outside !== undefined) return outside;
  }
  return { cwd };
}

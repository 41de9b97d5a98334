import { failure } from "../execute-tool-call.js";
import { boundText, errorMessage, quoteName } from "../internal/describe.js";
import type { Tool, ToolContext } from "../tool.js";
import type { ToolResult } from "../tool-result.js";
import { convertMcpResult } from "./convert-mcp-content.js";
import type { ServerTool } from "./list-server-tools.js";
import type { McpImportSettings } from "./register-mcp-tools-options.js";
import { RequestTimedOut, timedRequest } from "./timed-request.js";

/** Longest error message of the server's that a result echoes. */
const MAX_SERVER_MESSAGE_CHARS = 1_000;

/** What a call needs of the import's settings. */
type CallSettings = Pick<McpImportSettings, "client" | "serverName" | "timeout" | "parts">;

/** What a `tools/call` that did not resolve becomes: an error result naming the server. */
function callFailure(
  settings: CallSettings,
  name: string,
  mcpName: string,
  error: unknown,
  signal: AbortSignal,
): ToolResult {
  const where = `MCP server ${quoteName(settings.serverName)}`;
  if (signal.aborted) {
    return failure(name, "aborted", `tool ${quoteName(mcpName)} was aborted before ${where} answered`, error);
  }
  // Only our own timer: a server's error -32001 ("Request timed out") is the server's error.
  if (error instanceof RequestTimedOut) {
    return failure(
      name,
      "timeout",
      `${where} did not answer tool ${quoteName(mcpName)} within ${settings.timeout} ms`,
      error,
    );
  }
  // `MCP error <code>: <the server's message>` for a JSON-RPC error; the message is the server's: bounded.
  const message = boundText(errorMessage(error), MAX_SERVER_MESSAGE_CHARS);
  return failure(name, "tool_failed", `${where} failed to run tool ${quoteName(mcpName)}: ${message}`, error);
}

/** Calls the server's tool; every outcome is a result, never a rejection. */
async function callServerTool(
  settings: CallSettings,
  name: string,
  mcpName: string,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolResult> {
  const { signal } = context;
  let result: unknown;
  try {
    // A plain request, not `callTool` (see `listServerTools`): that validates the result with zod
    // (an unknown content type fails the call with a dump of zod issues) and `structuredContent`
    // against the server's `outputSchema` with the SDK's Ajv, whose patterns backtrack (a hostile
    // server could hold the event loop for hours with one short string). The model reads the
    // content, converted block by block, never validated output.
    const params = { name: mcpName, arguments: args };
    result = await timedRequest(
      settings.client,
      { method: "tools/call" as const, params },
      settings.timeout,
      signal,
      ({ progress, total, message }) =>
        context.reportProgress(total !== undefined && total > 0 ? progress / total : undefined, message),
    );
  } catch (error) {
    return callFailure(settings, name, mcpName, error, signal);
  }
  return convertMcpResult(name, settings.serverName, result, settings.parts ?? "all");
}

/**
 * The registry's tool `name` for the server's tool: its call is a `tools/call` request (see
 * {@link callServerTool}), every outcome a result.
 */
export function createServerTool(settings: CallSettings, name: string, serverTool: ServerTool): Tool {
  const { description, parameters } = serverTool;
  const mcpName = serverTool.name;
  return Object.freeze({
    name,
    description,
    parameters,
    execute: (args: Record<string, unknown>, context: ToolContext) =>
      callServerTool(settings, name, mcpName, args, context),
  });
}

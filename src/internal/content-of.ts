import type { ToolResult } from "../tool-result.js";
import { describeType, errorMessage } from "./describe.js";

/** A tool message's text: `contentForLLM()`, which reads a tool's own `err` and so may throw. */
export function contentOf(result: ToolResult): string {
  try {
    const content: unknown = result.contentForLLM();
    if (typeof content === "string") return content;
    return `the tool's result has no text (got ${describeType(content)})`;
  } catch (error) {
    return `the tool's result cannot be read: ${errorMessage(error)}`;
  }
}

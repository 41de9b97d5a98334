import type { Tool } from "./tool.js";
import { errorResult, newToolResult, userResult } from "./tool-result.js";

// Plain tools with JSON Schemas (no zod at runtime in the core): the registry validates the
// arguments against these schemas before `execute` runs, so `execute` reads checked strings.

/** The three tools' rule for their text: an empty (or blank) value is an error the model reads. */
function blank(value: unknown): boolean {
  return typeof value !== "string" || value.trim() === "";
}

const text = (description: string) => ({ type: "string", description });

/**
 * `task_completion` (loop-breaking): the model reports the task done; `result` becomes the
 * loop's `content`. An empty `result` is an error result ("result cannot be empty") and the loop
 * goes on.
 */
export const taskCompletionTool: Tool = Object.freeze({
  name: "task_completion",
  description: "Call this when the task is complete, with the final result for the user.",
  parameters: { type: "object", properties: { result: text("The final result of the task") }, required: ["result"] },
  loopBreaking: true,
  execute: ({ result }: Record<string, unknown>) =>
    blank(result) ? errorResult("result cannot be empty") : userResult(result as string),
});

/**
 * `ask_question` (loop-breaking): the model asks the user; the question is the result's
 * `forUser` and `forLLM`, and `data: { question, suggestions }` lets a UI render the choices (at
 * most 4: more are invalid arguments). An empty question is an error result ("question cannot be
 * empty").
 */
export const askQuestionTool: Tool = Object.freeze({
  name: "ask_question",
  description: "Ask the user a question when you need more information; optionally offer up to 4 suggested answers.",
  parameters: {
    type: "object",
    properties: {
      question: text("The question to ask the user"),
      suggestions: { type: "array", items: { type: "string" }, maxItems: 4, description: "Up to 4 suggested answers" },
    },
    required: ["question"],
  },
  loopBreaking: true,
  execute: ({ question, suggestions }: Record<string, unknown>) => {
    if (blank(question)) return errorResult("question cannot be empty");
    const choices = Array.isArray(suggestions) ? [...(suggestions as string[])] : [];
    return userResult(question as string).withData({ question, suggestions: choices });
  },
});

/**
 * `converse` (loop-breaking): a conversational reply that ends the turn; `message` becomes
 * the loop's `content`. An empty message is an error result ("message cannot be empty").
 */
export const converseTool: Tool = Object.freeze({
  name: "converse",
  description: "Reply to the user conversationally when no task needs to be done.",
  parameters: { type: "object", properties: { message: text("The message to the user") }, required: ["message"] },
  loopBreaking: true,
  execute: ({ message }: Record<string, unknown>) =>
    blank(message) ? errorResult("message cannot be empty") : newToolResult(message as string),
});

/**
 * The three ready-made loop-breaking tools, in this order: `task_completion`, `ask_question`,
 * `converse` (a new array each call).
 * @example
 * for (const tool of loopBreakingTools()) registry.register(tool);
 */
export function loopBreakingTools(): Tool[] {
  return [taskCompletionTool, askQuestionTool, converseTool];
}

/**
 * The same function as {@link loopBreakingTools}, under the name it had first.
 * @deprecated Use {@link loopBreakingTools}.
 */
export const forgeTools: () => Tool[] = loopBreakingTools;

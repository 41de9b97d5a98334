import { contentText } from "./content-part.js";
import type { Message } from "./provider.js";
import type { RegistryLike } from "./registry-like.js";
import { LOOP_BREAKING_NAMES } from "./registry-symbols.js";
import type { Tool } from "./tool.js";
import type { ToolLoopResult } from "./tool-loop-result.js";

/**
 * Whether a tool name is loop-breaking: the registry's set (symbol protocol), or for a registry
 * without it, its `get(name).loopBreaking`. `undefined` when no tool can be (the usual case: the
 * loop then checks nothing per call).
 */
export function loopBreakingTest(tools: RegistryLike | null): ((name: string) => boolean) | undefined {
  if (tools === null) return undefined;
  const names = (tools as Partial<Record<symbol, unknown>>)[LOOP_BREAKING_NAMES];
  if (typeof names === "function") {
    const set = names.call(tools) as ReadonlySet<string>;
    return set.size === 0 ? undefined : (name) => set.has(name);
  }
  const get = (tools as { get?: unknown }).get;
  if (typeof get !== "function") return undefined;
  return (name) => (get.call(tools, name) as Partial<Tool> | undefined)?.loopBreaking === true;
}

/** The result of a run a loop-breaking tool's call stopped: `content` is the call's answer text. */
export function stoppedBy(
  call: { id: string; name: string },
  content: string,
  iterations: number,
  transcript: Message[],
): ToolLoopResult {
  const result: ToolLoopResult = { content, iterations, messages: transcript, stopReason: "loop_breaking_tool" };
  result.stoppedBy = { toolName: call.name, toolCallId: call.id };
  return result;
}

/**
 * A checkpoint taken after the answers of a turn in which a loop-breaking tool succeeded: the run
 * stopped there, so its resume does too (`content` is that answer's text, the result's `forUser`
 * not being in the transcript). `undefined` when the transcript does not end with such a turn.
 */
export function stoppedTurn(
  transcript: Message[],
  tools: RegistryLike | null,
  iterations: number,
): ToolLoopResult | undefined {
  const isLoopBreaking = loopBreakingTest(tools);
  let start = transcript.length;
  while (start > 0 && transcript[start - 1]?.role === "tool") start--;
  const turn = transcript[start - 1];
  if (isLoopBreaking === undefined || start === transcript.length || turn?.toolCalls === undefined) return undefined;
  const answers = new Map<unknown, Message>();
  for (let index = start; index < transcript.length; index++) {
    const answer = transcript[index] as Message;
    answers.set(answer.toolCallId, answer);
  }
  // As the loop decides: the first successful loop-breaking call in call order.
  for (const call of turn.toolCalls) {
    const answer = answers.get(call.id);
    if (answer === undefined || answer.isError === true || !isLoopBreaking(call.name)) continue;
    return stoppedBy(call, contentText(answer.content), iterations, transcript);
  }
  return undefined;
}

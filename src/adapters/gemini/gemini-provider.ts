import { type GeminiFunctionDeclaration, toGeminiTools } from "../../formats/gemini.js";
import { describeType, isPlainObject, isRecord, showValue } from "../../internal/describe.js";
import type {
  FinishReason,
  LLMProvider,
  LLMResponse,
  Message,
  ProviderToolCall,
  ToolCall,
  UsageInfo,
} from "../../provider.js";
import { toCallArguments } from "../shared/call-arguments.js";
import { invalidOption } from "../shared/invalid-option.js";
import { errorBodyProblem, invalidResponse, quoted } from "../shared/invalid-response.js";
import { tokenCount, usageInfo } from "../shared/usage.js";

/** A function call in a Gemini part; the Gemini Developer API usually gives no `id`. */
export interface GeminiFunctionCall {
  id?: string;
  name?: string;
  args?: Record<string, unknown>;
}

/** A function result in a Gemini part. */
export interface GeminiFunctionResponse {
  id?: string;
  name?: string;
  response?: Record<string, unknown>;
}

/** One part of a Gemini content (only the fields this adapter reads or writes). */
export interface GeminiPart {
  text?: string;
  /** `true` on the model's thought summaries, which are not part of the answer. */
  thought?: boolean;
  /** Opaque signature the model attaches to (the first of) its function calls; it must be sent back. */
  thoughtSignature?: string;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

/** A Gemini content: a turn of `"user"` or `"model"`. */
export interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

/** The `config` this adapter sends: your `llmOptions` plus the fields below. */
export interface GeminiGenerateContentConfig {
  systemInstruction?: GeminiContent;
  tools?: Array<{ functionDeclarations?: GeminiFunctionDeclaration[] }>;
  abortSignal?: AbortSignal;
  [key: string]: unknown;
}

/** The `generateContent` parameters this adapter sends. */
export interface GeminiGenerateContentParameters {
  model: string;
  contents: GeminiContent[];
  config: GeminiGenerateContentConfig;
}

/** A candidate of a `generateContent` answer (only the fields this adapter reads). */
export interface GeminiCandidate {
  content?: GeminiContent;
  finishReason?: string;
  /** Why the model stopped, in words (e.g. the text of a malformed function call). */
  finishMessage?: string;
}

/** A `generateContent` answer (only the fields this adapter reads). */
export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[];
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    totalTokenCount?: number;
  };
  promptFeedback?: { blockReason?: string };
  responseId?: string;
}

/**
 * The part of `@google/genai`'s client (`new GoogleGenAI()`) this adapter uses. The parameter is
 * typed loosely on purpose (the SDK types schema types as its own enum); the adapter sends
 * {@link GeminiGenerateContentParameters}.
 */
export interface GeminiClientLike {
  models: {
    generateContent(params: {
      model: string;
      contents: unknown;
      config?: object;
    }): Promise<GeminiGenerateContentResponse>;
  };
}

/** Options of {@link createGeminiProvider}. */
export interface GeminiProviderOptions {
  /** Your client: `new GoogleGenAI({ apiKey })` from `@google/genai` (Gemini API or Vertex AI). */
  client: GeminiClientLike;
  /** What `getDefaultModel()` returns; a `model` given to `runToolLoop` wins. @default "gemini-2.5-flash" */
  model?: string;
}

/** What this adapter keeps in `ToolCall.providerMetadata.gemini`. */
export interface GeminiCallMetadata {
  /** The call id, when the API gave one (it is then echoed in `functionCall.id` and `functionResponse.id`). */
  id?: string;
  /** The part's `thoughtSignature`, sent back unchanged on the same call. */
  thoughtSignature?: string;
}

const METADATA_KEY = "gemini";

const PROVIDER = "Gemini";

/**
 * Finish reasons after which the candidate is no answer: the model tried to call a function and
 * the API could not give the call (`MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`,
 * `TOO_MANY_TOOL_CALLS`). Any text that came with them is cut short, so it is not taken either.
 */
const UNUSABLE_FINISH_REASONS: ReadonlySet<string> = new Set([
  "MALFORMED_FUNCTION_CALL",
  "UNEXPECTED_TOOL_CALL",
  "TOO_MANY_TOOL_CALLS",
]);

const CONTENT_FILTER = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
]);

function metadataOf(call: ToolCall | undefined): GeminiCallMetadata {
  const metadata = call?.providerMetadata?.[METADATA_KEY];
  if (!isPlainObject(metadata)) return {};
  const result: GeminiCallMetadata = {};
  if (typeof metadata.id === "string") result.id = metadata.id;
  if (typeof metadata.thoughtSignature === "string") result.thoughtSignature = metadata.thoughtSignature;
  return result;
}

function functionCallPart(call: ToolCall): GeminiPart {
  const { id, thoughtSignature } = metadataOf(call);
  const part: GeminiPart = {
    functionCall: { ...(id === undefined ? {} : { id }), name: call.name, args: call.arguments ?? {} },
  };
  if (thoughtSignature !== undefined) part.thoughtSignature = thoughtSignature;
  return part;
}

/** Converts the transcript: system text apart, assistant → `model`, each turn's answers in one `user` content. */
function toGeminiContents(messages: readonly Message[]): { contents: GeminiContent[]; system: string[] } {
  const contents: GeminiContent[] = [];
  const system: string[] = [];
  let lastCalls: readonly ToolCall[] = [];
  let answers: GeminiPart[] | undefined;

  for (const message of messages) {
    if (message.role !== "tool") answers = undefined;
    switch (message.role) {
      case "system":
        system.push(message.content ?? "");
        break;
      case "assistant": {
        lastCalls = message.toolCalls ?? [];
        const parts: GeminiPart[] = [];
        if (typeof message.content === "string" && message.content !== "") parts.push({ text: message.content });
        parts.push(...lastCalls.map(functionCallPart));
        if (parts.length > 0) contents.push({ role: "model", parts });
        break;
      }
      case "tool": {
        const call = lastCalls.find((candidate) => candidate.id === message.toolCallId);
        const { id } = metadataOf(call);
        const text = message.content ?? "";
        const part: GeminiPart = {
          functionResponse: {
            ...(id === undefined ? {} : { id }),
            // Gemini pairs answers with calls by name (and position): use the call's own name.
            name: call?.name ?? message.toolName ?? "",
            response: message.isError === true ? { error: text } : { output: text },
          },
        };
        if (answers === undefined) {
          answers = [];
          contents.push({ role: "user", parts: answers });
        }
        answers.push(part);
        break;
      }
      default:
        contents.push({ role: "user", parts: [{ text: message.content ?? "" }] });
    }
  }
  return { contents, system };
}

function buildConfig(
  system: string[],
  declarations: GeminiFunctionDeclaration[],
  llmOptions: Record<string, unknown>,
  signal: AbortSignal | undefined,
): GeminiGenerateContentConfig {
  const { max_tokens: maxTokens, tools: extraTools, abortSignal: ownSignal, ...rest } = llmOptions;
  const config: GeminiGenerateContentConfig = { ...rest };
  // OpenAI's (and Go picoclaw's) name for the output cap.
  if (maxTokens !== undefined && config.maxOutputTokens === undefined) config.maxOutputTokens = maxTokens;
  if (system.length > 0) config.systemInstruction = { parts: system.map((text) => ({ text })) };
  const tools = Array.isArray(extraTools) ? [...extraTools] : [];
  if (declarations.length > 0) tools.push({ functionDeclarations: declarations });
  if (tools.length > 0) config.tools = tools;
  const signals = [signal, ownSignal].filter((value): value is AbortSignal => value instanceof AbortSignal);
  if (signals.length === 1) config.abortSignal = signals[0] as AbortSignal;
  else if (signals.length > 1) config.abortSignal = AbortSignal.any(signals);
  return config;
}

/**
 * The response's first candidate; `undefined` only for a blocked prompt (`promptFeedback.blockReason`
 * and no candidate), which is an answer.
 * @throws InvalidProviderResponseError for anything else without a candidate (`{}`, an error body …)
 *   and for a first candidate that is not an object or has neither content nor a finishReason
 */
function firstCandidate(response: unknown): GeminiCandidate | undefined {
  // The SDK's response is a class instance (GenerateContentResponse): isRecord, not isPlainObject.
  if (!isRecord(response)) {
    throw invalidResponse(PROVIDER, `the response is not an object (got ${describeType(response)})`, response);
  }
  const { candidates } = response;
  if (Array.isArray(candidates) && candidates.length > 0) {
    const [first] = candidates;
    if (!isRecord(first)) {
      throw invalidResponse(PROVIDER, `the first candidate is not an object (got ${describeType(first)})`, response);
    }
    // A finished candidate always has a finishReason; one without it and without content is nothing.
    if ((first.content === undefined || first.content === null) && typeof first.finishReason !== "string") {
      throw invalidResponse(PROVIDER, "the first candidate has no content and no finishReason", response);
    }
    return first as GeminiCandidate;
  }
  const feedback = response.promptFeedback;
  if (isRecord(feedback) && typeof feedback.blockReason === "string") return undefined;
  const shown = Array.isArray(candidates) ? "[]" : describeType(candidates);
  const problem = errorBodyProblem(response) ?? `the response has no candidate (candidates: ${shown})`;
  throw invalidResponse(PROVIDER, problem, response);
}

function toFinishReason(raw: string | undefined, hasCalls: boolean, blocked: boolean): FinishReason {
  if (hasCalls) return "tool_calls";
  if (raw === undefined || raw === "") return blocked ? "content_filter" : "stop";
  if (raw === "STOP") return "stop";
  if (raw === "MAX_TOKENS") return "length";
  if (CONTENT_FILTER.has(raw)) return "content_filter";
  return raw;
}

function toUsage(metadata: GeminiGenerateContentResponse["usageMetadata"]): UsageInfo | undefined {
  if (!isPlainObject(metadata)) return undefined;
  // Thinking tokens are output the model was billed for, as in OpenAI's completion_tokens.
  const completionTokens =
    (tokenCount(metadata.candidatesTokenCount) ?? 0) + (tokenCount(metadata.thoughtsTokenCount) ?? 0);
  return usageInfo(tokenCount(metadata.promptTokenCount), completionTokens, tokenCount(metadata.totalTokenCount));
}

/**
 * An {@link LLMProvider} for Gemini's `generateContent`, through your `@google/genai` client.
 *
 * System messages become `systemInstruction`; assistant turns become `model` contents with text
 * and `functionCall` parts; all answers of a turn go in one `user` content right after it, as
 * `functionResponse` parts (`response: { output }`, or `{ error }` for a failed tool). The Gemini
 * Developer API gives calls no ids: the adapter makes stable ones from the response
 * (`gemini_<responseId>_<index>`) and pairs answers by name and position; ids the API does give
 * are echoed. A call's `thoughtSignature` is kept in `toolCall.providerMetadata.gemini` and sent
 * back on the same part. Tool schemas are converted to the subset Gemini accepts (`toGeminiSchema`).
 *
 * `llmOptions` are `GenerateContentConfig` fields (`temperature`, `maxOutputTokens`, `toolConfig`,
 * `thinkingConfig`, `httpOptions` …); `max_tokens` becomes `maxOutputTokens`, and `tools` you give
 * (e.g. `googleSearch`) are sent alongside the function declarations.
 *
 * @example
 * ```ts
 * import { GoogleGenAI } from "@google/genai";
 * import { createGeminiProvider } from "toolloop/gemini";
 *
 * const provider = createGeminiProvider({ client: new GoogleGenAI({}), model: "gemini-2.5-flash" });
 * const result = await runToolLoop({ provider, tools: registry, maxIterations: 10 }, messages);
 * ```
 */
export function createGeminiProvider(options: GeminiProviderOptions): LLMProvider {
  const factory = "createGeminiProvider()";
  if (!isPlainObject(options)) {
    throw new TypeError(`createGeminiProvider() expects an options object, got ${describeType(options)}`);
  }
  const { client, model: defaultModel = "gemini-2.5-flash" } = options;
  if (
    typeof client !== "object" ||
    client === null ||
    typeof client.models !== "object" ||
    client.models === null ||
    typeof client.models.generateContent !== "function"
  ) {
    throw invalidOption(factory, "client", "a GoogleGenAI client (models.generateContent)", describeType(client));
  }
  if (typeof defaultModel !== "string") throw invalidOption(factory, "model", "a string", describeType(defaultModel));
  let responses = 0;

  return {
    getDefaultModel: () => defaultModel,

    async chat(messages, tools, model, llmOptions, signal) {
      signal?.throwIfAborted();
      const { contents, system } = toGeminiContents(messages);
      // New declaration objects on every call: the SDK rewrites them in place.
      const declarations = tools === undefined ? [] : toGeminiTools(tools);
      const config = buildConfig(system, declarations, isPlainObject(llmOptions) ? llmOptions : {}, signal);
      const response = await client.models.generateContent({ model, contents, config });

      responses++;
      const candidate = firstCandidate(response);
      const finishReason = typeof candidate?.finishReason === "string" ? candidate.finishReason : undefined;
      if (finishReason !== undefined && UNUSABLE_FINISH_REASONS.has(finishReason)) {
        const message = quoted(candidate?.finishMessage);
        const details = message === undefined ? finishReason : `${finishReason}: ${message}`;
        throw invalidResponse(PROVIDER, `the model gave no usable answer (finishReason ${details})`, response);
      }
      const candidateContent = isRecord(candidate?.content) ? candidate.content : undefined;
      const parts = Array.isArray(candidateContent?.parts) ? candidateContent.parts : [];
      let content = "";
      const toolCalls: ProviderToolCall[] = [];
      const idPrefix = `gemini_${typeof response.responseId === "string" && response.responseId !== "" ? response.responseId : responses}`;
      for (const part of parts) {
        if (!isPlainObject(part)) continue;
        if (typeof part.text === "string" && part.thought !== true) content += part.text;
        const call = part.functionCall;
        if (call === undefined || call === null) continue;
        if (!isPlainObject(call)) {
          throw invalidResponse(PROVIDER, `a functionCall part is not an object (got ${describeType(call)})`, response);
        }
        if (typeof call.name !== "string" || call.name === "") {
          throw invalidResponse(PROVIDER, `a functionCall part has no name (got ${showValue(call.name)})`, response);
        }
        const index = toolCalls.length;
        const given = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
        const metadata: GeminiCallMetadata = {};
        if (given !== undefined) metadata.id = given;
        if (typeof part.thoughtSignature === "string") metadata.thoughtSignature = part.thoughtSignature;
        const converted: ProviderToolCall = {
          id: given ?? `${idPrefix}_${index}`,
          type: "function",
          name: call.name,
          // An object normally (absent → `{}`); anything else reaches the loop, which tells the model.
          arguments: toCallArguments(call.args),
        };
        if (Object.keys(metadata).length > 0) converted.providerMetadata = { [METADATA_KEY]: metadata };
        toolCalls.push(converted);
      }

      const blocked = typeof response.promptFeedback?.blockReason === "string";
      const result: LLMResponse = {
        content,
        toolCalls,
        finishReason: toFinishReason(finishReason, toolCalls.length > 0, blocked),
      };
      const usage = toUsage(response.usageMetadata);
      if (usage !== undefined) result.usage = usage;
      return result;
    },
  };
}

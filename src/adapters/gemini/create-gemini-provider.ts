import { type GeminiFunctionDeclaration, toGeminiTools } from "../../formats/gemini.js";
import { checkString, optionError } from "../../internal/options.js";
import type { LLMProvider, Message, OutputRequest, ToolDefinition } from "../../provider.js";
import { checkedClient } from "../shared/factory-options.js";
import { outputRequest, portableLLMOptions } from "../shared/request-options.js";
import { convertOncePerArray } from "../shared/tools-cache.js";
import { fromGeminiResponse, type GeminiGenerateContentResponse } from "./convert-gemini-response.js";
import { fromGeminiStream } from "./convert-gemini-stream.js";
import { type GeminiContent, type GeminiToolMedia, PROVIDER, toGeminiMessages } from "./convert-to-gemini-messages.js";

/** The `config` this adapter sends: your `llmOptions` plus the fields below. */
export interface GeminiGenerateContentConfig {
  /** The transcript's system messages, one text part each. */
  systemInstruction?: GeminiContent;
  /** The `tools` you gave in `llmOptions`, then the registry's function declarations. */
  tools?: Array<{ functionDeclarations?: GeminiFunctionDeclaration[] }>;
  /** The loop's signal, combined with an `abortSignal` you gave in `llmOptions`. */
  abortSignal?: AbortSignal;
  /** `"application/json"` when the loop asks for structured output (`options.output`). */
  responseMimeType?: string;
  /** The loop's output schema (`options.output.schema`), as JSON Schema. */
  responseJsonSchema?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The `generateContent` parameters this adapter sends. */
export interface GeminiGenerateContentParameters {
  /** The loop's model. */
  model: string;
  /** The transcript without its system messages (see the adapter's description). */
  contents: GeminiContent[];
  /** Your `llmOptions` plus the fields the adapter sets. */
  config: GeminiGenerateContentConfig;
}

/**
 * The part of `@google/genai`'s client (`new GoogleGenAI()`) this adapter uses. The parameter is
 * typed loosely on purpose (the SDK types schema types as its own enum); the adapter sends
 * {@link GeminiGenerateContentParameters}.
 */
export interface GeminiClientLike {
  /** The models resource. */
  models: {
    /** Generates one whole answer (not streamed). */
    generateContent(params: {
      model: string;
      contents: unknown;
      config?: object;
    }): Promise<GeminiGenerateContentResponse>;
    /**
     * The same request, streamed: resolves with the answer's chunks. Without it the provider has
     * no `chatStream` (the loop then calls `chat`, also with a listener).
     */
    generateContentStream?(params: {
      model: string;
      contents: unknown;
      config?: object;
    }): Promise<AsyncIterable<GeminiGenerateContentResponse>>;
  };
  /** `true` for a client of Vertex AI (`new GoogleGenAI({ vertexai: true })`): the provider is then named `"gcp.vertex_ai"`. */
  readonly vertexai?: boolean;
}

/** Options of {@link createGeminiProvider}. */
export interface GeminiProviderOptions {
  /** Your client: `new GoogleGenAI({ apiKey })` from `@google/genai` (Gemini API or Vertex AI). */
  client: GeminiClientLike;
  /** What `getDefaultModel()` returns; a `model` given to `runToolLoop` wins. @default "gemini-2.5-flash" */
  model?: string;
  /**
   * Where a tool's images and documents go: `"function-response"` in its answer's
   * `functionResponse.parts` (multimodal function responses, which Gemini documents for its
   * Gemini 3 models), `"user-message"` in one user content right after the turn's answers (for
   * older models), or `"auto"`: `"function-response"` for a model named `gemini-<n>…` with n ≥ 3,
   * `"user-message"` for any other. Media a function response cannot hold (image URLs, audio …)
   * go in that user content either way.
   * @default "auto"
   */
  toolMedia?: GeminiToolMedia | "auto";
}

const DEFAULT_MODEL = "gemini-2.5-flash";

const CLIENT = {
  option: "client",
  method: ["models", "generateContent"],
  expected: "a GoogleGenAI client (models.generateContent)",
} as const;

/**
 * The function declarations for a definitions array, converted once per array. They are not
 * frozen, unlike the other adapters' tools: `@google/genai` rewrites each declaration's
 * `parameters` in place (`parameters = processJsonSchema(parameters)`), which would throw on a
 * frozen object. That rewrite is harmless to share: for a schema in Gemini's subset (what
 * `toGeminiSchema` makes) it builds an equal object, so every step still sends the same tools.
 */
const geminiDeclarations = convertOncePerArray((definitions) => toGeminiTools(definitions));

function checkToolMedia(value: unknown): GeminiToolMedia | "auto" {
  if (value === undefined) return "auto";
  if (value === "auto" || value === "function-response" || value === "user-message") return value;
  throw optionError("createGeminiProvider", "toolMedia", '"auto", "function-response" or "user-message"', value);
}

/** `gemini-<major>` anywhere in a model name (`gemini-3-flash-preview`, `models/gemini-3.1-pro` …). */
const GEMINI_MAJOR = /(?:^|\/)gemini-(\d+)/;

/** Where `"auto"` puts a tool's media for `model`: in the function response from Gemini 3 on. */
function toolMediaFor(model: string): GeminiToolMedia {
  const major = GEMINI_MAJOR.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3 ? "function-response" : "user-message";
}

/** What {@link buildConfig} puts together. */
interface ConfigParts {
  system: readonly string[];
  declarations: GeminiFunctionDeclaration[];
  llmOptions: Record<string, unknown>;
  output: OutputRequest | undefined;
  signal: AbortSignal | undefined;
}

function buildConfig({ system, declarations, llmOptions, output, signal }: ConfigParts): GeminiGenerateContentConfig {
  const { tools: extraTools, abortSignal: ownSignal, ...rest } = llmOptions;
  const config: GeminiGenerateContentConfig = { ...rest };
  if (output !== undefined) {
    // The schema the loop validates the answer against; the API takes one schema field, not both.
    delete config.responseSchema;
    config.responseMimeType = "application/json";
    config.responseJsonSchema = output.schema;
  }
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
 * Images and files: a user message's base64 images and files become `inlineData` parts, image
 * URLs `fileData` parts (with the part's `mediaType`, which Gemini requires); a tool's PNG, JPEG,
 * WebP, PDF and plain-text parts go in its `functionResponse.parts` from Gemini 3 on (see
 * `toolMedia`), anything else it returned in one user content after the turn's answers. A GIF
 * image or an image URL without `mediaType` is an `UnsupportedContentError`, thrown before any
 * request.
 *
 * Structured output: the loop's `options.output` becomes `responseMimeType: "application/json"`
 * and `responseJsonSchema` (the JSON Schema as given), sent with the function declarations.
 *
 * `llmOptions` are `GenerateContentConfig` fields (`temperature`, `maxOutputTokens`, `toolConfig`,
 * `thinkingConfig`, `httpOptions` …); `max_tokens` becomes `maxOutputTokens` and `stream` is
 * refused, as in every adapter (see "`max_tokens` and `stream`" in `docs/adapters.md`), and `tools`
 * you give (e.g. `googleSearch`) are sent alongside the function declarations.
 *
 * Streaming: with a client that has `models.generateContentStream` (`@google/genai`'s does),
 * `chatStream` sends the same request streamed, yields text, thought summaries (as reasoning) and
 * each call's arguments as they arrive, and ends with the answer `chat` would give (see
 * {@link fromGeminiStream}). Usage maps `thoughtsTokenCount` to `reasoningTokens` (also counted in
 * `completionTokens`) and `cachedContentTokenCount` to `cachedInputTokens`. `providerName` is
 * `"gcp.vertex_ai"` for a Vertex AI client (`vertexai: true`), else `"gcp.gemini"`.
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
  const factory = "createGeminiProvider";
  const client = checkedClient({ factory, options, ...CLIENT });
  const defaultModel = checkString(factory, "model", options.model) ?? DEFAULT_MODEL;
  const toolMedia = checkToolMedia(options.toolMedia);
  let responses = 0;

  const request = (
    messages: Message[],
    definitions: ToolDefinition[] | undefined,
    model: string,
    llmOptions: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): GeminiGenerateContentParameters => {
    const portable = portableLLMOptions({ provider: PROVIDER, llmOptions, maxTokensField: "maxOutputTokens" });
    const output = outputRequest(PROVIDER, llmOptions);
    const { contents, system } = toGeminiMessages(messages, {
      toolMedia: toolMedia === "auto" ? toolMediaFor(model) : toolMedia,
    });
    const declarations = definitions !== undefined && definitions.length > 0 ? geminiDeclarations(definitions) : [];
    const config = buildConfig({ system, declarations, llmOptions: portable, output, signal });
    return { model, contents, config };
  };

  const provider: LLMProvider = {
    providerName: client.vertexai === true ? "gcp.vertex_ai" : "gcp.gemini",

    getDefaultModel: () => defaultModel,

    async chat(messages, definitions, model, llmOptions, signal) {
      signal?.throwIfAborted();
      const params = request(messages, definitions, model, llmOptions, signal);
      const response = await client.models.generateContent(params);
      responses++;
      return fromGeminiResponse({ response, sequence: responses });
    },
  };
  const { generateContentStream } = client.models;
  if (typeof generateContentStream !== "function") return provider;
  return {
    ...provider,
    async *chatStream(messages, definitions, model, llmOptions, signal) {
      signal?.throwIfAborted();
      // Ends the request when the consumer stops early: the client's stream does not cancel it.
      const stop = new AbortController();
      const combined = signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]);
      const params = request(messages, definitions, model, llmOptions, combined);
      try {
        const stream = await generateContentStream.call(client.models, params).catch((error: unknown) => {
          // The client rejects with its own abort error; the loop's signal says why.
          throw signal?.aborted ? signal.reason : error;
        });
        responses++;
        yield* fromGeminiStream({ stream, signal, sequence: responses });
      } finally {
        stop.abort();
      }
    },
  };
}

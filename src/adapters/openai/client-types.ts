/**
 * The parts of the `openai` client the adapters use, typed structurally so that `toolloop` never
 * imports `openai` (an optional peer dependency). `new OpenAI()` from openai 5, 6 and 7 fits;
 * so does any object with the same methods (a proxy, a test double, a compatible client).
 *
 * The request and response types are deliberately loose: the adapters check every field they
 * read at run time, so an OpenAI-compatible server that omits or adds fields does not break them.
 * @module
 */

/** Per-request options the adapters pass as the second argument of `create`. */
export interface OpenAIRequestOptions {
  /** The loop's signal: aborting it cancels the HTTP request. */
  signal?: AbortSignal | undefined;
}

/** A Chat Completions response, as far as the adapter relies on it (`ChatCompletion` in the SDK). */
export interface OpenAIChatCompletionLike {
  choices: readonly unknown[];
  usage?: unknown;
}

/** What {@link createOpenAIChatProvider} needs from `new OpenAI()`: `client.chat.completions.create`. */
export interface OpenAIChatClient {
  chat: {
    completions: {
      create(
        body: { model: string; messages: readonly unknown[] },
        options?: OpenAIRequestOptions,
      ): PromiseLike<OpenAIChatCompletionLike>;
    };
  };
}

/** A Responses API response, as far as the adapter relies on it (`Response` in the SDK). */
export interface OpenAIResponseLike {
  output: readonly unknown[];
  status?: unknown;
  usage?: unknown;
}

/** What {@link createOpenAIResponsesProvider} needs from `new OpenAI()`: `client.responses.create`. */
export interface OpenAIResponsesClient {
  responses: {
    create(body: { model?: string; input?: unknown }, options?: OpenAIRequestOptions): PromiseLike<OpenAIResponseLike>;
  };
}

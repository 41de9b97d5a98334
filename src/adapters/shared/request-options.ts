import { isRecord } from "../../internal/describe.js";
import { optionError } from "../../internal/options.js";
import type { OutputRequest } from "../../provider.js";

/** What {@link portableLLMOptions} reads. */
export interface PortableOptionsRequest {
  /** The API's name, e.g. `"Anthropic"`: the refusal's prefix. */
  provider: string;
  /** The loop's `llmOptions` (anything that is not an object counts as none). */
  llmOptions: unknown;
  /**
   * The API's own field for the output cap (`"max_output_tokens"`, `"maxOutputTokens"` …), to
   * which `max_tokens` is renamed; `"max_tokens"` where the API's name is `max_tokens` itself.
   */
  maxTokensField: string;
}

/**
 * `llmOptions` as every adapter reads them (the table in `docs/adapters.md`, "`max_tokens` and
 * `stream`"): a copy in which `max_tokens` — the portable name, picoclaw's — is renamed to the
 * API's own `maxTokensField` unless that field is given too (the API's own name wins), and from
 * which `stream` is removed: the adapters return whole responses, so `stream` may only be absent
 * or `false`; and from which `output` (the loop's {@link OutputRequest}, read by
 * {@link outputRequest}) is removed: each adapter sends it in its API's own fields.
 * @throws TypeError `<provider>: llmOptions.stream must be false or absent (…), got true` for any
 *   other `stream`
 */
export function portableLLMOptions({
  provider,
  llmOptions,
  maxTokensField,
}: PortableOptionsRequest): Record<string, unknown> {
  const options: Record<string, unknown> = isRecord(llmOptions) ? { ...llmOptions } : {};
  const { stream, max_tokens: maxTokens } = options;
  if (stream !== undefined && stream !== false) {
    throw optionError(provider, "llmOptions.stream", "false or absent (the adapter returns whole responses)", stream);
  }
  // Guarded: a `delete` of an absent key still costs a runtime call, on every step.
  if (Object.hasOwn(options, "stream")) delete options.stream;
  if (Object.hasOwn(options, "output")) delete options.output;
  if (maxTokensField !== "max_tokens" && Object.hasOwn(options, "max_tokens")) {
    if (maxTokens !== undefined && options[maxTokensField] === undefined) options[maxTokensField] = maxTokens;
    delete options.max_tokens;
  }
  return options;
}

/**
 * The final answer's schema the loop asks for (`options.output`, an {@link OutputRequest}), or
 * `undefined` when there is none.
 * @throws TypeError `<provider>: llmOptions.output must be …` when it is not `{ name, schema }`
 */
export function outputRequest(provider: string, llmOptions: unknown): OutputRequest | undefined {
  const output = isRecord(llmOptions) ? llmOptions.output : undefined;
  if (output === undefined) return undefined;
  if (!isRecord(output) || typeof output.name !== "string" || !isRecord(output.schema)) {
    throw optionError(provider, "llmOptions.output", "{ name: string, schema: object }", output);
  }
  return { name: output.name, schema: output.schema };
}

/** The per-request options argument of an official client: the loop's signal, only when there is one. */
export function signalOption(signal: AbortSignal | undefined): { signal: AbortSignal } | undefined {
  return signal === undefined ? undefined : { signal };
}

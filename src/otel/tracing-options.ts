import { type Tracer, trace } from "@opentelemetry/api";
import { isRecord } from "../internal/describe.js";
import { optionError } from "../internal/options.js";
import { TRACER_NAME, TRACER_VERSION } from "./tracer-version.js";

/** Options of {@link tracing}. */
export interface TracingOptions {
  /**
   * The tracer the spans are made with.
   * @default trace.getTracer("toolloop", version): the globally registered provider's (a no-op until one is registered)
   */
  tracer?: Tracer | undefined;
  /**
   * Record what the model and the tools exchange: each tool call's arguments
   * (`gen_ai.tool.call.arguments`, as JSON) and result (`gen_ai.tool.call.result`, its `forLLM`
   * text), and an error result's text as the span's status description, each cut to 4,096
   * characters. Off by default: they may hold personal data and secrets (see docs/tracing.md).
   * @default false
   */
  captureContent?: boolean | undefined;
  /**
   * The agent's name: the run span is then `invoke_agent {agentName}` with `gen_ai.agent.name`.
   * @default none: the run span is `invoke_agent`
   */
  agentName?: string | undefined;
}

/** The checked options of `tracing`, defaults applied. @internal */
export interface TracingSettings {
  tracer: Tracer;
  captureContent: boolean;
  agentName: string | undefined;
}

/** `true` for an object with the two methods of a `Tracer`. */
function isTracer(value: unknown): value is Tracer {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<Tracer>).startSpan === "function" &&
    typeof (value as Partial<Tracer>).startActiveSpan === "function"
  );
}

/**
 * Checks the options of `tracing` (a `TypeError` naming the option otherwise) and applies the defaults.
 * @internal
 */
export function checkTracingOptions(where: string, options: unknown): TracingSettings {
  if (options === undefined) options = {};
  if (!isRecord(options)) throw optionError(where, "options", "an object", options);
  const { tracer, captureContent = false, agentName } = options;
  if (tracer !== undefined && !isTracer(tracer)) throw optionError(where, "tracer", "an OpenTelemetry Tracer", tracer);
  if (typeof captureContent !== "boolean") throw optionError(where, "captureContent", "a boolean", captureContent);
  if (agentName !== undefined && (typeof agentName !== "string" || agentName === "")) {
    throw optionError(where, "agentName", "a non-empty string", agentName);
  }
  return {
    tracer: tracer ?? trace.getTracer(TRACER_NAME, TRACER_VERSION),
    captureContent,
    agentName,
  };
}

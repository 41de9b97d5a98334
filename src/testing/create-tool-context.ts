import { defaultLogger } from "../internal/logger.js";
import { optionError } from "../internal/options.js";
import type { ToolContext } from "../tool.js";

/**
 * A complete {@link ToolContext} for calling a tool's `execute` directly in a unit test: a signal
 * that never aborts, `channel` and `chatId` `""`, empty `metadata`, a silent logger, a
 * `reportProgress` that does nothing — each replaced by what `overrides` gives.
 *
 * @example
 * ```ts
 * import { createToolContext } from "toolloop/testing";
 *
 * const controller = new AbortController();
 * const result = await weather.execute({ city: "Paris" }, createToolContext({ signal: controller.signal }));
 * ```
 */
export function createToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  if (typeof overrides !== "object" || overrides === null) {
    throw optionError("createToolContext", "overrides", "an object", overrides);
  }
  return {
    signal: new AbortController().signal,
    channel: "",
    chatId: "",
    metadata: {},
    // A child: its level can be changed without reaching the library's own silent logger.
    logger: defaultLogger().child({}),
    reportProgress: () => {},
    ...overrides,
  };
}

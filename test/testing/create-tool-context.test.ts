import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineTool, type Tool } from "../../src/index.js";
import { defaultLogger } from "../../src/internal/logger.js";
import { createToolContext } from "../../src/testing/index.js";

describe("createToolContext", () => {
  it("is a complete context: never-aborting signal, empty channel, chat id and metadata, a silent logger", () => {
    const context = createToolContext();
    expect(context.signal).toBeInstanceOf(AbortSignal);
    expect(context.signal.aborted).toBe(false);
    expect(context).toMatchObject({ channel: "", chatId: "", metadata: {} });
    expect(context.logger.isLevelEnabled?.("error")).toBe(false);
    expect("toolCallId" in context).toBe(false);
    expect(createToolContext().signal).not.toBe(context.signal); // nothing shared between tests
  });

  it("its logger is a child of the library's silent default: raising its level leaves the default silent", () => {
    const logger = createToolContext().logger as ReturnType<typeof defaultLogger> & { level: string };
    expect(logger).not.toBe(defaultLogger());
    logger.level = "debug";
    expect(logger.isLevelEnabled?.("debug")).toBe(true);
    expect(defaultLogger().isLevelEnabled("error")).toBe(false);
  });

  it("takes overrides", () => {
    const controller = new AbortController();
    const callback = () => {};
    const context = createToolContext({
      signal: controller.signal,
      chatId: "42",
      toolCallId: "c1",
      metadata: { user: "u" },
      asyncCallback: callback,
    });
    expect(context).toMatchObject({ chatId: "42", toolCallId: "c1", metadata: { user: "u" }, channel: "" });
    expect(context.signal).toBe(controller.signal);
    expect(context.asyncCallback).toBe(callback);
  });

  it("lets a test call a tool's execute directly", async () => {
    const weather = defineTool({
      name: "weather",
      description: "Weather",
      parameters: z.object({ city: z.string() }),
      execute: ({ city }, { chatId }) => `sunny in ${city} for ${chatId}`,
    });
    const result = await weather.execute({ city: "Paris" }, createToolContext({ chatId: "7" }));
    expect(result.forLLM).toBe("sunny in Paris for 7");
    const plain: Tool = {
      name: "p",
      description: "",
      parameters: {},
      execute: (_args, context) => context.channel || "none",
    };
    expect(await plain.execute({}, createToolContext())).toBe("none");
  });

  it("overrides that are not an object are a TypeError", () => {
    expect(() => createToolContext(null as never)).toThrow(
      new TypeError("createToolContext: overrides must be an object, got null"),
    );
  });
});

import { describe, expect, it } from "vitest";
import { ToolRegistry } from "../src/index.js";
import { captureLogger } from "./helpers/capture-logger.js";
import { tool } from "./helpers/loop-tools.js";

describe("log lines of a call (issue 9)", () => {
  it("durationMs is milliseconds to the microsecond, in the completed and the failed line", async () => {
    const { logger, lines: all } = captureLogger("debug");
    const slow = async () => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      return "done";
    };
    const registry = new ToolRegistry({ logger });
    registry.register(tool("ok", slow));
    registry.register(
      tool("bad", async () => {
        await slow();
        throw new Error("kaput");
      }),
    );
    await registry.execute("ok", {});
    await registry.execute("bad", {});
    const lines = all.filter(({ msg }) => msg !== "tool call started");
    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [20, "tool call completed"],
      [40, "tool call failed"],
    ]);
    for (const { durationMs } of lines) {
      expect(durationMs).toBeGreaterThan(1);
      // A double written with all its digits (`2.0931359999999997`) costs pino about 40 % more per line.
      expect(String(durationMs)).toMatch(/^\d+(\.\d{1,3})?$/);
    }
  });
});

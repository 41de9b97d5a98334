import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { Logger } from "../../src/index.js";
import {
  childLogger,
  defaultLogger,
  log,
  logEnabled,
  type ResolvedLogger,
  resolveLogger,
  roundMs,
} from "../../src/internal/logger.js";
import { captureLogger } from "../helpers/capture-logger.js";

/** A console-like logger: the four levels only, each a spy. */
function levelsOnly() {
  return { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
}

const EXPECTED = "an object with debug, info, warn and error methods";

describe("resolveLogger", () => {
  it("without a logger is the default: one silent pino logger, made once", () => {
    const logger = resolveLogger(undefined, "ToolRegistry");
    expect(logger).toBe(defaultLogger());
    expect(resolveLogger(undefined, "runToolLoop")).toBe(logger);
    for (const level of ["debug", "info", "warn", "error"]) expect(logger.isLevelEnabled(level)).toBe(false);
  });

  it("uses a logger with isLevelEnabled and child (pino) as it is", () => {
    const { logger } = captureLogger();
    expect(resolveLogger(logger, "ToolRegistry")).toBe(logger);
  });

  it("wraps a console-like logger: every level enabled, child returns the logger itself, calls forwarded", () => {
    const plain = levelsOnly();
    const resolved = resolveLogger(plain, "ToolRegistry");
    expect(resolved).not.toBe(plain);
    for (const level of ["debug", "info", "warn", "error", "trace"]) expect(resolved.isLevelEnabled(level)).toBe(true);
    expect(resolved.child({ tool: "t" })).toBe(plain);
    resolved.debug({ a: 1 }, "d");
    resolved.info({ b: 2 }, "i");
    resolved.warn({ c: 3 }, "w");
    resolved.error({ d: 4 }, "e");
    expect(plain.debug).toHaveBeenCalledWith({ a: 1 }, "d");
    expect(plain.info).toHaveBeenCalledWith({ b: 2 }, "i");
    expect(plain.warn).toHaveBeenCalledWith({ c: 3 }, "w");
    expect(plain.error).toHaveBeenCalledWith({ d: 4 }, "e");
  });

  it("accepts console itself, whose child is console", () => {
    const resolved = resolveLogger(console, "ToolRegistry");
    expect(resolved.isLevelEnabled("debug")).toBe(true);
    expect(resolved.child({})).toBe(console);
  });

  it("calls a wrapped logger's methods on the logger itself (loggers that rely on `this` keep working)", () => {
    class Collector implements Logger {
      readonly #lines: string[] = [];
      readonly #threshold: string;
      constructor(threshold: string) {
        this.#threshold = threshold;
      }
      get lines() {
        return this.#lines;
      }
      debug(_fields: object, message?: string) {
        this.#lines.push(`debug ${message}`);
      }
      info(_fields: object, message?: string) {
        this.#lines.push(`info ${message}`);
      }
      warn(_fields: object, message?: string) {
        this.#lines.push(`warn ${message}`);
      }
      error(_fields: object, message?: string) {
        this.#lines.push(`error ${message}`);
      }
      isLevelEnabled(level: string) {
        return level === this.#threshold;
      }
    }
    const collector = new Collector("warn");
    const resolved = resolveLogger(collector, "f");
    expect(resolved).not.toBe(collector); // no child: completed
    resolved.info({}, "one");
    resolved.warn({}, "two");
    expect(collector.lines).toEqual(["info one", "warn two"]);
    expect(resolved.isLevelEnabled("warn")).toBe(true);
    expect(resolved.isLevelEnabled("info")).toBe(false);
    expect(resolved.child({})).toBe(collector);
  });

  it("a logger with child but no isLevelEnabled: its child is used, and resolved too", () => {
    const inner = levelsOnly();
    const outer = {
      ...levelsOnly(),
      child: vi.fn(function (this: unknown, bindings: Record<string, unknown>) {
        expect(this).toBe(outer);
        expect(bindings).toEqual({ tool: "t" });
        return inner;
      }),
    };
    const resolved = resolveLogger(outer, "f");
    expect(resolved.isLevelEnabled("debug")).toBe(true);
    const child = resolved.child({ tool: "t" });
    expect(outer.child).toHaveBeenCalledTimes(1);
    child.info({}, "hi");
    expect(inner.info).toHaveBeenCalledWith({}, "hi");
    expect(child.isLevelEnabled?.("debug")).toBe(true);
  });

  it("a child that is no logger is the option TypeError, where `child`", () => {
    const resolved = resolveLogger({ ...levelsOnly(), child: () => ({ info() {} }) }, "f");
    expect(() => resolved.child({})).toThrow(TypeError);
    expect(() => resolved.child({})).toThrow(
      /^child: logger must be an object with .*\(missing: debug\(\), warn\(\), error\(\)\), got \{\}$/,
    );
  });

  it.each([
    ["null", null, "null"],
    ["a string", "console", '"console"'],
    ["a number", 1, "1"],
    ["a function", () => {}, "function"],
  ])("%s is a TypeError naming what a logger is", (_case, value, shown) => {
    expect(() => resolveLogger(value, "ToolRegistry")).toThrow(
      new TypeError(`ToolRegistry: logger must be ${EXPECTED} (pino, console …), got ${shown}`),
    );
  });

  it("an object missing levels is a TypeError naming the missing methods", () => {
    expect(() => resolveLogger({ info() {}, warn: "no" }, "runToolLoop")).toThrow(
      new TypeError(`runToolLoop: logger must be ${EXPECTED} (missing: debug(), warn(), error()), got {"warn":"no"}`),
    );
    expect(() => resolveLogger({}, "f")).toThrow("(missing: debug(), info(), warn(), error()), got {}");
  });
});

describe("logEnabled", () => {
  it("asks the logger, and says false when it throws", () => {
    const { logger } = captureLogger("info");
    expect(logEnabled(logger, "debug")).toBe(false);
    expect(logEnabled(logger, "info")).toBe(true);
    const broken = {
      ...levelsOnly(),
      isLevelEnabled: () => {
        throw new Error("broken");
      },
      child: () => broken,
    } as ResolvedLogger;
    expect(logEnabled(broken, "warn")).toBe(false);
  });
});

describe("log", () => {
  it("builds the fields only when the level is enabled, then writes one line", () => {
    const { logger, lines } = captureLogger("info");
    const fields = vi.fn(() => ({ tool: "t" }));
    log(logger, "debug", fields, "skipped");
    expect(fields).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    log(logger, "info", fields, "written");
    expect(fields).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([expect.objectContaining({ level: 30, tool: "t", msg: "written" })]);
  });

  it("writes through the level's own method", () => {
    const plain = levelsOnly();
    const resolved = resolveLogger(plain, "f");
    log(resolved, "warn", () => ({ a: 1 }), "w");
    log(resolved, "error", () => ({ b: 2 }), "e");
    expect(plain.warn).toHaveBeenCalledWith({ a: 1 }, "w");
    expect(plain.error).toHaveBeenCalledWith({ b: 2 }, "e");
    expect(plain.info).not.toHaveBeenCalled();
  });

  it("never throws: not for a throwing level, isLevelEnabled or fields thunk", () => {
    const throwing = () => {
      throw new Error("broken logger");
    };
    const brokenLevels = resolveLogger({ debug: throwing, info: throwing, warn: throwing, error: throwing }, "f");
    expect(() => log(brokenLevels, "info", () => ({}), "m")).not.toThrow();
    const brokenCheck = resolveLogger({ ...levelsOnly(), isLevelEnabled: throwing }, "f");
    expect(() => log(brokenCheck, "warn", () => ({}), "m")).not.toThrow();
    const plain = levelsOnly();
    expect(() => log(resolveLogger(plain, "f"), "info", throwing, "m")).not.toThrow();
    expect(plain.info).not.toHaveBeenCalled();
  });

  it("never throws for a thrown non-Error either", () => {
    const resolved = resolveLogger(
      {
        ...levelsOnly(),
        info: () => {
          throw "a string";
        },
      },
      "f",
    );
    expect(() => log(resolved, "info", () => ({}), "m")).not.toThrow();
  });
});

describe("childLogger", () => {
  it("is the logger's child, with the bindings on every line", () => {
    const { logger, lines } = captureLogger("info");
    const child = childLogger(logger, { tool: "search" });
    expect(child).not.toBe(logger);
    child.info({ n: 1 }, "from the tool");
    expect(lines).toEqual([expect.objectContaining({ tool: "search", n: 1, msg: "from the tool" })]);
  });

  it("is a completed logger's original logger (console-like loggers have no child)", () => {
    const plain = levelsOnly();
    expect(childLogger(resolveLogger(plain, "f"), { tool: "t" })).toBe(plain);
  });

  it.each([
    [
      "throws",
      () => {
        throw new Error("no child");
      },
    ],
    ["returns undefined", () => undefined],
    ["returns null", () => null],
    ["returns a string", () => "child"],
    ["returns an object without every level", () => ({ debug() {}, info() {}, warn() {} })],
  ])("falls back to the logger itself when child() %s", (_case, child) => {
    const logger = { ...levelsOnly(), isLevelEnabled: () => true, child } as unknown as ResolvedLogger;
    expect(childLogger(logger, { tool: "t" })).toBe(logger);
  });

  it("a silent pino logger's child is a logger too", () => {
    const child = childLogger(pino({ level: "silent" }), { tool: "t" });
    expect(typeof child.info).toBe("function");
    expect(() => child.info({}, "nothing written")).not.toThrow();
  });
});

describe("roundMs", () => {
  it.each([
    [2.093136, 2.093],
    [0.1 + 0.2, 0.3],
    [0.0004, 0],
    [0.0005, 0.001],
    [12, 12],
    [1234.5678, 1234.568],
  ])("%s ms is written as %s (to the microsecond)", (ms, expected) => {
    expect(roundMs(ms)).toBe(expected);
  });
});

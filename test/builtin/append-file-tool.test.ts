import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { setup, useFileWorkspace, ws } from "../helpers/file-workspace.js";

useFileWorkspace();

describe("append_file", () => {
  it("appends, and creates a missing file with its parents", async () => {
    const { call } = setup();
    const result = await call("append_file", { path: "notes.txt", content: "four\n" });
    expect([result.forLLM, result.silent]).toEqual(['Appended 5 bytes to "notes.txt"', true]);
    expect(readFileSync(ws("notes.txt"), "utf8")).toBe("one\ntwo\nthree\nfour\n");
    await call("append_file", { path: "logs/today.log", content: "a" });
    expect(readFileSync(ws("logs", "today.log"), "utf8")).toBe("a");
  });
});

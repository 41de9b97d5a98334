import { afterEach, expect, it } from "vitest";
import { chromiumBinary } from "./chromium.js";

const path = process.env.PATH;
afterEach(() => {
  process.env.PATH = path;
});

it("finds Debian's chromium on PATH, as a path playwright-core can launch", () => {
  expect(chromiumBinary()).toMatch(/^\/.*chromium$/);
});

it("without chromium (and without apt-get to install it), fails with the exact command: never skips", () => {
  process.env.PATH = "/nonexistent";
  expect(() => chromiumBinary()).toThrow(
    "the browser tests (examples/web-chat) need a chromium on PATH; install it with: sudo apt-get install -y chromium",
  );
});

import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { TRACER_NAME, TRACER_VERSION } from "../../src/otel/tracer-version.js";

it("the default tracer is named toolloop, with the package's version", () => {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  expect(TRACER_NAME).toBe(manifest.name);
  expect(TRACER_VERSION).toBe(manifest.version);
});

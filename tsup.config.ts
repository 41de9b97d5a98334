import { defineConfig } from "tsup";

const adapters = ["openai", "anthropic", "ollama", "gemini", "ai-sdk"];

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "testing/index": "src/testing/index.ts",
    ...Object.fromEntries(adapters.map((name) => [`${name}/index`, `src/adapters/${name}/index.ts`])),
    "builtin/index": "src/builtin/index.ts",
    "mcp/index": "src/mcp/index.ts",
    "bullmq/index": "src/bullmq/index.ts",
    "otel/index": "src/otel/index.ts",
    "restate/index": "src/restate/index.ts",
  },
  format: ["esm"],
  target: "node20",
  platform: "node",
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    globalSetup: ["test/global-setup.ts"],
    // The type tests (*.test-d.ts) run here for a bare `vitest run`; `npm test`, `.ci/run` and the
    // Node 22/24 runs pass --typecheck.enabled=false, because `npm run typecheck` (tsc --noEmit over
    // src, test, examples and bench) has already checked them: a failed expectTypeOf is a type error.
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    testTimeout: 20_000,
    pool: "forks",
  },
});

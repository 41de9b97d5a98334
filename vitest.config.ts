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
    // Safety nets, not measures: a test asserts behaviour and bounds its own work, and a hang still
    // fails. They are generous because the suite must pass with both cores busy (property tests of
    // 1,500 runs took 19–22 s at a load of 8 on 2 cores; child processes and Redis start slowly then).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});

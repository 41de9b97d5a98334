import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * `toolloop` and its subpaths resolve to the sources, as tsconfig.json's `paths` say (and as tsx
 * runs the examples): a test that imports an example module gets `src/`, never a `dist/` that may
 * be stale or, on a fresh clone, not built yet. Exact names first, the `toolloop/*` pattern last.
 */
function sourceAliases(): { find: RegExp; replacement: string }[] {
  const tsconfig = JSON.parse(readFileSync(new URL("./tsconfig.json", import.meta.url), "utf8"));
  const paths = tsconfig.compilerOptions.paths as Record<string, [string]>;
  const file = (path: string) => fileURLToPath(new URL(path, import.meta.url));
  return Object.entries(paths)
    .sort(([a], [b]) => Number(a.endsWith("*")) - Number(b.endsWith("*")))
    .map(([name, [target]]) =>
      name.endsWith("/*")
        ? { find: new RegExp(`^${name.slice(0, -2)}/([a-z-]+)$`), replacement: file(target).replace("*", "$1") }
        : { find: new RegExp(`^${name}$`), replacement: file(target) },
    );
}

export default defineConfig({
  resolve: { alias: sourceAliases() },
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

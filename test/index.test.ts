import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const adapters = ["openai", "anthropic", "ollama", "gemini", "ai-sdk"];
/** Every entry point the package exports (tsup.config.ts), by its import specifier. */
const entries: Record<string, string> = {
  toolloop: "src/index.ts",
  "toolloop/testing": "src/testing/index.ts",
  "toolloop/builtin": "src/builtin/index.ts",
  "toolloop/mcp": "src/mcp/index.ts",
  "toolloop/bullmq": "src/bullmq/index.ts",
  "toolloop/otel": "src/otel/index.ts",
  ...Object.fromEntries(adapters.map((name) => [`toolloop/${name}`, `src/adapters/${name}/index.ts`])),
};

/** The names each entry exports, values and types alike, as TypeScript resolves them. */
function exportedNames(): Map<string, string[]> {
  const files = Object.values(entries).map((file) => `${root}${file}`);
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [specifier, file] of Object.entries(entries)) {
    const source = program.getSourceFile(`${root}${file}`);
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (symbol === undefined) throw new Error(`${file}: no module symbol`);
    names.set(
      specifier,
      checker.getExportsOfModule(symbol).map((exported) => exported.name),
    );
  }
  return names;
}

describe("the package's public names", () => {
  const names = exportedNames();

  it("finds each entry's exports", () => {
    expect(names.get("toolloop")).toEqual(expect.arrayContaining(["runToolLoop", "ToolRegistry", "ToolLoopError"]));
    expect(names.get("toolloop/testing")).toContain("ScriptedProvider");
  });

  it("has no two names that differ only by case, across every entry (ToolloopError / ToolLoopError read alike)", () => {
    const byLowerCase = new Map<string, Set<string>>();
    for (const list of names.values()) {
      for (const name of list) {
        const spellings = byLowerCase.get(name.toLowerCase()) ?? new Set<string>();
        spellings.add(name);
        byLowerCase.set(name.toLowerCase(), spellings);
      }
    }
    const alike = [...byLowerCase.values()].filter((spellings) => spellings.size > 1).map((set) => [...set]);
    expect(alike).toEqual([]);
  });

  it("names the base error ToolloopBaseError, with no alias of its old name", () => {
    const core = names.get("toolloop") ?? [];
    expect(core).toEqual(expect.arrayContaining(["ToolloopBaseError", "isToolloopBaseError", "ToolloopBaseErrorCode"]));
    expect(core).not.toEqual(expect.arrayContaining(["ToolloopError"]));
    expect(core.filter((name) => /^(is)?ToolloopError(Code)?$/.test(name))).toEqual([]);
  });
});

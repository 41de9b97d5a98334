import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { registerBuiltinTools } from "../../src/builtin/index.js";
import { ToolRegistry } from "../../src/index.js";

const root = mkdtempSync(join(tmpdir(), "toolloop-register-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh workspace with notes.txt, and a secret.txt outside it. */
function files(): { workspace: string; secret: string } {
  const directory = mkdtempSync(join(root, "ws-"));
  writeFileSync(join(directory, "notes.txt"), "first line\nsecond line\n");
  const secret = join(mkdtempSync(join(root, "out-")), "secret.txt");
  writeFileSync(secret, "the secret\n");
  return { workspace: directory, secret };
}

const FILE_TOOLS = ["append_file", "edit_file", "list_dir", "read_file", "write_file"];

describe("registerBuiltinTools", () => {
  it("registers the file tools and execute_bash", () => {
    const registry = new ToolRegistry();
    registerBuiltinTools(registry, files());
    expect(registry.list()).toEqual([...FILE_TOOLS, "execute_bash"].sort());
  });

  it("registers the file tools alone with exec: false", () => {
    const registry = new ToolRegistry();
    registerBuiltinTools(registry, { ...files(), exec: false });
    expect(registry.list()).toEqual(FILE_TOOLS);
  });

  it("keeps what the registry held", () => {
    const registry = new ToolRegistry();
    registry.register({ name: "mine", description: "mine", parameters: { type: "object" }, execute: () => "ok" });
    registerBuiltinTools(registry, { ...files(), exec: false });
    expect(registry.has("mine")).toBe(true);
  });

  it("puts every tool on the same workspace, restricted by default", async () => {
    const { workspace, secret } = files();
    const registry = new ToolRegistry();
    registerBuiltinTools(registry, { workspace });
    expect((await registry.execute("list_dir", { path: "." })).forLLM).toContain("FILE: notes.txt");
    expect((await registry.execute("read_file", { path: "notes.txt" })).forLLM).toContain("1|first line");
    expect((await registry.execute("execute_bash", { command: "ls" })).forLLM).toContain("notes.txt");
    for (const [name, args] of [
      ["read_file", { path: secret }],
      ["read_file", { path: "../../etc/passwd" }],
      ["write_file", { path: secret, content: "pwned" }],
      ["execute_bash", { command: `cat ${secret}` }],
    ] as const) {
      const result = await registry.execute(name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(result.forLLM).not.toContain("the secret");
    }
  });

  it("passes the workspace options on: allowReadPaths opens reading only", async () => {
    const { workspace, secret } = files();
    const registry = new ToolRegistry();
    registerBuiltinTools(registry, { workspace, allowReadPaths: [/secret\.txt$/], exec: false });
    expect((await registry.execute("read_file", { path: secret })).forLLM).toContain("1|the secret");
    expect((await registry.execute("write_file", { path: secret, content: "x", overwrite: true })).isError).toBe(true);
  });

  it("passes the workspace options on: allowWritePaths opens writing only", async () => {
    const { workspace, secret } = files();
    const registry = new ToolRegistry();
    registerBuiltinTools(registry, { workspace, allowWritePaths: [/secret\.txt$/], exec: false });
    expect((await registry.execute("read_file", { path: secret })).isError).toBe(true);
    const written = await registry.execute("append_file", { path: secret, content: "more\n" });
    expect(written.isError).toBe(false);
  });

  it("passes restrictToWorkspace: false on", async () => {
    const { workspace, secret } = files();
    const registry = new ToolRegistry();
    registerBuiltinTools(registry, { workspace, restrictToWorkspace: false, exec: false });
    expect((await registry.execute("read_file", { path: secret })).forLLM).toContain("1|the secret");
  });

  it("hands the tools only the workspace options, with their defaults for the rest", async () => {
    const { workspace } = files();
    const registry = new ToolRegistry();
    // maxReadBytes is createFileTools' option, not registerBuiltinTools': it does not reach the tool.
    registerBuiltinTools(registry, { workspace, exec: false, maxReadBytes: 3 } as never);
    expect((await registry.execute("read_file", { path: "notes.txt" })).forLLM).toContain("2|second line");
  });

  it.each([
    [
      "a registry that is not one",
      () => [{}, files()],
      "registerBuiltinTools: registry must be a ToolRegistry, got {}",
    ],
    [
      "no options",
      () => [new ToolRegistry(), undefined],
      "registerBuiltinTools: options must be an object, got undefined",
    ],
    [
      "a relative workspace",
      () => [new ToolRegistry(), { workspace: "workspace" }],
      'registerBuiltinTools: workspace must be an absolute directory path, got "workspace"',
    ],
    [
      "a workspace that does not exist",
      () => [new ToolRegistry(), { workspace: join(root, "missing") }],
      `registerBuiltinTools: workspace must be an existing directory, got ${JSON.stringify(join(root, "missing"))}`,
    ],
    [
      "exec that is not a boolean",
      () => [new ToolRegistry(), { ...files(), exec: "no" }],
      'registerBuiltinTools: exec must be a boolean, got "no"',
    ],
    [
      "an allow list of strings",
      () => [new ToolRegistry(), { ...files(), allowReadPaths: ["/etc"] }],
      'registerBuiltinTools: allowReadPaths[0] must be a RegExp, got "/etc"',
    ],
  ])("throws a TypeError for %s and registers nothing", (_label, make, message) => {
    const [registry, options] = make() as [ToolRegistry, never];
    expect(() => registerBuiltinTools(registry, options)).toThrow(new TypeError(message));
    if (registry instanceof ToolRegistry) expect(registry.count()).toBe(0);
  });
});

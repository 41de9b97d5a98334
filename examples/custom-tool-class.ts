/**
 * A tool written as a class implementing `Tool` with a plain JSON Schema (the Go way: Name,
 * Description, Parameters, Execute). Arguments are validated against the schema before execute.
 * Run: npx tsx examples/custom-tool-class.ts
 */
import { errorResult, newToolResult, type Tool, type ToolContext, ToolRegistry, type ToolResult } from "toolloop";

class ReadNoteTool implements Tool {
  readonly name = "read_note";
  readonly description = "Read a note by its title";
  readonly parameters = {
    type: "object",
    properties: {
      title: { type: "string", description: "Title of the note" },
      maxChars: { type: "integer", minimum: 1, description: "Cut the note after this many characters" },
    },
    required: ["title"],
  };

  constructor(private readonly notes: Map<string, string>) {}

  execute(args: Record<string, unknown>, context: ToolContext): ToolResult {
    const title = args.title as string;
    const note = this.notes.get(title);
    if (note === undefined) return errorResult(`no note titled "${title}"`);
    context.logger.debug({ title }, "note read");
    const maxChars = typeof args.maxChars === "number" ? args.maxChars : note.length;
    return newToolResult(note.slice(0, maxChars));
  }
}

const registry = new ToolRegistry();
registry.register(new ReadNoteTool(new Map([["shopping", "eggs, flour, milk"]])));

console.log(registry.getSummaries().join("\n"));
for (const args of [{ title: "shopping", maxChars: 4 }, { title: "todo" }, { title: 42 }, {}]) {
  const result = await registry.execute("read_note", args);
  console.log(`${JSON.stringify(args)} → ${result.isError ? "error: " : ""}${result.contentForLLM()}`);
}

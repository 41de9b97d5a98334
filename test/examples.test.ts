import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsx = `${root}node_modules/.bin/tsx`;

// Each example is a process of its own (tsx compiles it first): seconds on an idle machine, much more
// with both cores busy. The bound only turns a hang into a failure, so it is generous.
const EXAMPLE_TIMEOUT_MS = 120_000;

function runExample(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // No API keys reach the examples: the ones for real APIs must explain what to set and exit 0.
  const env = { ...process.env };
  for (const key of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"]) delete env[key];
  return new Promise((resolve) => {
    execFile(tsx, [`examples/${file}`], { cwd: root, env, timeout: EXAMPLE_TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const expectations: Record<string, RegExp[]> = {
  "quickstart.ts": [
    /assistant Let me check\. → calls get_weather\(\{"city":"Paris"\}\), add/,
    /tool +It is 21 degrees celsius and sunny in Paris\./,
    /invalid arguments for tool "add": b: .*expected number/,
    /completed after 2 iterations: It is sunny in Paris/,
  ],
  "custom-tool-class.ts": [
    /\{"title":"shopping","maxChars":4\} → eggs/,
    /\{"title":42\} → error: invalid arguments for tool "read_note": title: must be string/,
    /\{\} → error: invalid arguments for tool "read_note": title: required property is missing/,
  ],
  "contextual-tool.ts": [/\[telegram:chat-42 reply to #1001\] On my way!/],
  "async-tool.ts": [
    /immediately: backup of \/home started.*\(async: true\)/,
    /later: backup of \/home finished: 12 files/,
  ],
  "loop-breaking-agent.ts": [
    /calculator: 42/,
    /task_completion: error: result cannot be empty/,
    /stopped by task_completion \(loop_breaking_tool\) after 3 model calls/,
    /answer: 6 × 7 = 42/,
  ],
  "text-protocol.ts": [
    /native tools sent: none/,
    /## get_weather\nThe current weather in a city\nParameters: \{"type":"object"/,
    /<tool_result call_id="text_1_0" error="true">only server "local" is supported, got "web"<\/tool_result>/,
    /<tool_result tool_name="get_weather" call_id="text_2_0">21 degrees and sunny in Paris<\/tool_result>/,
    /completed after 3 model calls: It is 21 degrees and sunny in Paris\./,
  ],
  "streaming.ts": [
    /streamed: "Let me count\."\nassistant: "Let me count\."/,
    /calling count_words\(\{"text":"the quick brown fox"\}\)\nprogress running counting 4 words\nprogress completed\ncount_words → 4/,
    /streamed: "The text has 4 words\."/,
    /saved 4 messages, the same as the result: true/,
    /completed after 2 model calls: The text has 4 words\./,
  ],
  "approval-over-http.ts": [
    /POST \/chat → needs-approval: delete_file\(draft\.md\), delete_file\(thesis\.pdf\)/,
    /files still there: notes\.txt, draft\.md, thesis\.pdf/,
    /POST \/approve with an unknown id → 400 TypeError: resumeToolLoop: decisions must be keyed by the ids of the calls left waiting, got "not-a-call"/,
    /POST \/approve → done: I deleted draft\.md; you asked me to keep thesis\.pdf\./,
    /files left: notes\.txt, thesis\.pdf/,
  ],
  "approval.ts": [
    /approve delete_file\(draft\.md\)\? yes/,
    /approve delete_file\(thesis\.pdf\)\? no/,
    /delete_file: error: denied by the user: keep the thesis/,
    /files left: notes\.txt, thesis\.pdf/,
  ],
  "builtin-tools.ts": [
    /list_dir: FILE: greeting\.txt/,
    /read_file: 1\|Hello, world!/,
    /edit_file: File edited: "greeting\.txt"/,
    /execute_bash: greeting\.txt/,
    /read_file: error: access denied: path is outside the workspace/,
    /execute_bash: error: command refused by the deny list/,
    /greeting\.txt now reads: Hello, toolloop!/,
    /completed after 7 model calls/,
  ],
  "mcp-filesystem.ts": [
    /imported 14 tools: mcp_fs_create_directory, .*mcp_fs_read_text_file, .*mcp_fs_write_file/,
    /assistant: I'll write the list first\. → calls mcp_fs_write_file\(\{"path":"<dir>\/todo\.md",/,
    /tool mcp_fs_write_file: Successfully wrote to <dir>\/todo\.md/,
    /tool mcp_fs_list_directory: \[FILE\] todo\.md/,
    /tool mcp_fs_read_text_file: - try toolloop\/mcp/,
    /tool mcp_fs_read_text_file: error: Access denied - path outside allowed directories/,
    /completed after 4 model calls/,
  ],
  "queued-tools.ts": [
    /tool +tool "transcribe" is queued \(job call_transcribe_1\)/,
    /onCompletion: transcribe \(call_transcribe_1\) → transcript of memo\.ogg: "hello from the worker"/,
    /user +\[async result from transcribe \(call_transcribe_1\)\] transcript of memo\.ogg/,
    /assistant Here it is: transcript of memo\.ogg: "hello from the worker"/,
    /completed after 3 model calls/,
  ],
  "restate-agent.ts": [
    /registered the service: HTTP 201/,
    /approval requested: awakeable sign_1…/,
    /send → Your order A-17 is refunded\. \(2 model calls\)/,
    /user +Please refund order A-17\n +assistant +\n +tool +refunded A-17 \(idempotency key call_refund_1\)\n +assistant +Your order A-17 is refunded\./,
  ],
  "guardrail-middleware.ts": [
    /run_command: ran: ls -la/,
    /run_command: error: refused by policy: the command matches \/\\brm\\b\//,
    /commands that ran: ls -la\n/,
    /completed: I listed the files; deleting the backup was refused\./,
  ],
  "cache-middleware.ts": [
    /first run: 1 EUR is 1\.08 USD\. \(2 model calls\)/,
    /second run: 1 EUR is 1\.08 USD\. \(2 model calls\)/,
    /provider calls: 2, cache hits: 2/,
  ],
  "retry-middleware.ts": [
    /attempt 1 failed \(503 Service Unavailable\); retrying in 10 ms\nattempt 2 failed \(503 Service Unavailable\); retrying in 20 ms/,
    /provider calls: 3, loop iterations: 1/,
    /completed: Hello! How can I help\?/,
  ],
  "structured-output.ts": [
    /asked for: \{"name":"output","schema":\{"type":"object"/,
    /assistant \{"city":"Paris","celsius":21\}\nuser +Your answer was not accepted: advice: Invalid option/,
    /completed after 3 model calls: bring sunglasses \(21 °C in Paris\)/,
  ],
  "vision-tool.ts": [
    /user +"Here is our logo\. Does example\.com show it\?" \+ \[image from https:\/\/example\.com\/logo\.png\]/,
    /tool +"Screenshot of https:\/\/example\.com \(1×1 PNG\)" \+ \[image image\/png, 68 bytes\]/,
    /completed: I was shown 2 images/,
  ],
  "openai.ts": [/OPENAI_API_KEY/],
  "anthropic.ts": [/ANTHROPIC_API_KEY/],
};

describe("examples", () => {
  it("every example in examples/ is covered here", () => {
    const files = readdirSync(`${root}examples`).filter((file) => file.endsWith(".ts"));
    expect(files.sort()).toEqual(Object.keys(expectations).sort());
  });

  it.each(Object.entries(expectations))(
    "%s runs and prints what it promises",
    async (file, patterns) => {
      const { code, stdout, stderr } = await runExample(file);
      expect(stderr.replace(/npm warn.*\n?/g, "")).toBe("");
      expect(code).toBe(0);
      for (const pattern of patterns) expect(stdout).toMatch(pattern);
    },
    EXAMPLE_TIMEOUT_MS + 10_000,
  );
});

/**
 * A chat page that streams a run — text, reasoning and tool calls as they form — to the browser
 * over the AI SDK's UI message stream (what `useChat` reads). A small `node:http` server and one
 * static page (index.html, no build step).
 *
 *   npx tsx examples/web-chat/server.ts                 # the scripted provider: no key, no network
 *   OPENAI_API_KEY=sk-... npx tsx examples/web-chat/server.ts   # a real model (OPENAI_MODEL)
 *
 * Listens on 127.0.0.1, port PORT (default 3000), and prints its URL. The page POSTs
 * `{ messages }` (UI messages, as `useChat` sends them) to /api/chat and renders the chunks.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  defineTool,
  type LLMProvider,
  type LLMStreamDelta,
  type Message,
  streamToolLoop,
  ToolRegistry,
} from "toolloop";
import { toUIMessageStreamResponse } from "toolloop/ai-sdk";
import { type ScriptedCall, ScriptedProvider } from "toolloop/testing";
import { z } from "zod";

/** Most bytes of a request body: the whole conversation, as the page sends it. */
const MAX_BODY_BYTES = 1_000_000;

const celsius: Record<string, number> = { paris: 21, london: 16, tokyo: 27 };

function tools(): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "get_weather",
      description: "Current weather for a city",
      parameters: z.object({ city: z.string().describe("City name, e.g. Paris") }),
      execute: ({ city }) => {
        const degrees = celsius[city.toLowerCase()];
        return degrees === undefined ? `No weather station in ${city}.` : `${degrees} °C and sunny in ${city}.`;
      },
    }),
  );
  return registry;
}

/** Pieces of `text` of about `size` characters, as a model streams them. */
function pieces(text: string, size = 6): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out;
}

/**
 * The scripted "model": it thinks, says it will look, calls get_weather for the city named in the
 * last user message (streaming the call's arguments), then answers with the tool's result.
 */
function scriptedProvider(): LLMProvider {
  let calls = 0;
  const ask = ({ messages }: ScriptedCall) => {
    const last = messages.findLast((message) => message.role === "user");
    const text = typeof last?.content === "string" ? last.content : "";
    return /\bin ([A-Za-z]+)/.exec(text)?.[1] ?? "Paris";
  };
  const firstStep = (call: ScriptedCall) => {
    const city = ask(call);
    const id = `call_${++calls}`;
    const input = JSON.stringify({ city });
    const streamParts: LLMStreamDelta[] = [
      ...pieces(`The user asks about the weather in ${city}. I will call get_weather.`).map(
        (delta) => ({ type: "reasoning-delta", delta }) as const,
      ),
      ...pieces(`Let me check the weather in ${city}.`).map((delta) => ({ type: "text-delta", delta }) as const),
      { type: "tool-input-start", toolCallId: id, toolName: "get_weather" },
      ...pieces(input, 4).map((delta) => ({ type: "tool-input-delta", toolCallId: id, delta }) as const),
    ];
    return { streamParts, toolCalls: [{ id, name: "get_weather", arguments: input }] };
  };
  const answer = ({ messages }: ScriptedCall) => {
    const result = messages.at(-1);
    const text = typeof result?.content === "string" ? result.content : "";
    return { textDeltas: pieces(`Here it is: ${text}`) };
  };
  // One conversation turn: the call, then the answer. A provider per request (see handleChat).
  return new ScriptedProvider([firstStep, answer], { stream: true });
}

async function realProvider(): Promise<LLMProvider> {
  const { default: OpenAI } = await import("openai");
  const { createOpenAIChatProvider } = await import("toolloop/openai");
  const model = process.env.OPENAI_MODEL;
  return createOpenAIChatProvider({ client: new OpenAI(), ...(model ? { defaultModel: model } : {}) });
}

/** A UI message as `useChat` sends it: the text of its text parts is what this server reads. */
interface UIMessageIn {
  role?: unknown;
  parts?: unknown;
}

/** The conversation of a request body (`{ messages: UIMessage[] }`) as toolloop messages: text only. */
function conversation(body: unknown): Message[] {
  const list = (body as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(list)) throw new Error("expected { messages: UIMessage[] }");
  const messages: Message[] = [
    { role: "system", content: "You are a weather assistant. Use get_weather for any city asked about." },
  ];
  for (const message of list as UIMessageIn[]) {
    if (message.role !== "user" && message.role !== "assistant") continue;
    const parts = Array.isArray(message.parts) ? message.parts : [];
    const text = parts
      .filter((part): part is { type: "text"; text: string } => part?.type === "text" && typeof part.text === "string")
      .map((part) => part.text)
      .join("");
    if (text !== "") messages.push({ role: message.role, content: text });
  }
  return messages;
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** Options of {@link startWebChat}. */
export interface WebChatOptions {
  /** The port on 127.0.0.1; 0 picks a free one. @default 3000 */
  port?: number;
  /** A provider per request. @default the scripted one, or OpenAI when OPENAI_API_KEY is set */
  provider?: () => LLMProvider | Promise<LLMProvider>;
}

/** A running web chat. */
export interface WebChat {
  /** Where the page is. */
  url: string;
  /** Stops the server (open streams are cut, which aborts their runs). */
  close(): Promise<void>;
}

async function handleChat(request: IncomingMessage, response: ServerResponse, provider: WebChatOptions["provider"]) {
  let messages: Message[];
  try {
    messages = conversation(await readBody(request));
  } catch (error) {
    response.writeHead(400, { "content-type": "text/plain; charset=utf-8" });
    response.end(error instanceof Error ? error.message : "bad request");
    return;
  }
  const make = provider ?? (process.env.OPENAI_API_KEY ? realProvider : scriptedProvider);
  const events = streamToolLoop({ provider: await make(), tools: tools(), maxIterations: 5 }, messages);
  const web = toUIMessageStreamResponse(events);
  response.writeHead(web.status, Object.fromEntries(web.headers));
  // The browser going away destroys the pipe, which cancels the UI stream and aborts the run.
  Readable.fromWeb(web.body as import("node:stream/web").ReadableStream).pipe(response);
}

/** Starts the web chat on 127.0.0.1. */
export async function startWebChat(options: WebChatOptions = {}): Promise<WebChat> {
  const page = readFileSync(fileURLToPath(new URL("index.html", import.meta.url)));
  const server: Server = createServer((request, response) => {
    if (request.method === "GET" && (request.url === "/" || request.url === "/index.html")) {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(page);
    } else if (request.method === "POST" && request.url === "/api/chat") {
      handleChat(request, response, options.provider).catch(() => response.destroy());
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Run directly (npx tsx examples/web-chat/server.ts): serve on PORT and say where.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const chat = await startWebChat({ port: Number(process.env.PORT ?? 3000) });
  const which = process.env.OPENAI_API_KEY ? "OpenAI" : "the scripted provider (no key, no network)";
  console.log(`web chat on ${chat.url} — answering with ${which}; Ctrl+C stops it`);
}

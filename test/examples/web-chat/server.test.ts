import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebChat, type WebChat } from "../../../examples/web-chat/server.js";
import type { LLMProvider, LLMStreamPart, Message } from "../../../src/index.js";
import { chromiumBinary } from "../../helpers/chromium.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
// Generous: Chromium starts in seconds on an idle machine, much more with both cores busy. The
// bounds only turn a hang into a failure.
const BROWSER_TIMEOUT_MS = 90_000;

let browser: Browser;
const apiKey = process.env.OPENAI_API_KEY;

beforeAll(async () => {
  // The default provider is the scripted one only without a key.
  delete process.env.OPENAI_API_KEY;
  // As root (CI), Chromium's sandbox cannot start: the page is our own.
  browser = await chromium.launch({ executablePath: chromiumBinary(), args: ["--no-sandbox"] });
}, BROWSER_TIMEOUT_MS);

afterAll(async () => {
  if (apiKey !== undefined) process.env.OPENAI_API_KEY = apiKey;
  await browser?.close();
});

/** Opens the page of `chat`, sends `text` and returns the page. */
async function ask(chat: WebChat, text: string) {
  const page = await browser.newPage();
  page.setDefaultTimeout(BROWSER_TIMEOUT_MS);
  await page.goto(chat.url);
  await page.fill("#input", text);
  await page.click("#send");
  return page;
}

describe("examples/web-chat in headless Chromium", () => {
  it(
    "typing a message shows the model's reasoning, its text and the tool call with its result",
    async () => {
      const chat = await startWebChat({ port: 0 });
      try {
        const page = await ask(chat, "What is the weather in Tokyo?");
        await page.waitForSelector('.assistant[data-done="true"]');
        expect(await page.textContent(".assistant .reasoning")).toBe(
          "The user asks about the weather in Tokyo. I will call get_weather.",
        );
        expect(await page.locator(".assistant .text").allTextContents()).toEqual([
          "Let me check the weather in Tokyo.",
          "Here it is: 27 °C and sunny in Tokyo.",
        ]);
        expect(await page.textContent(".assistant .tool.done")).toBe(
          'get_weather({"city":"Tokyo"}) → 27 °C and sunny in Tokyo.',
        );
        expect(await page.locator(".failure").count()).toBe(0);
      } finally {
        await chat.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );

  it(
    "renders as it streams: the text and the forming call are on the page while the model is still writing",
    async () => {
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      // A model that stops half-way through its call's arguments until the test lets it go on.
      const provider: LLMProvider = {
        getDefaultModel: () => "gated",
        chat: () => Promise.reject(new Error("this provider only streams")),
        async *chatStream(messages: Message[]): AsyncGenerator<LLMStreamPart> {
          if (messages.at(-1)?.role === "tool") {
            yield { type: "text-delta", delta: "Done." };
            yield { type: "response", response: { content: "Done.", toolCalls: [], finishReason: "stop" } };
            return;
          }
          yield { type: "text-delta", delta: "Looking it up" };
          yield { type: "tool-input-start", toolCallId: "g1", toolName: "get_weather" };
          yield { type: "tool-input-delta", toolCallId: "g1", delta: '{"city":' };
          await gate;
          yield { type: "tool-input-delta", toolCallId: "g1", delta: '"Paris"}' };
          const toolCalls = [{ id: "g1", name: "get_weather", arguments: '{"city":"Paris"}' }];
          yield { type: "response", response: { content: "Looking it up", toolCalls, finishReason: "tool_calls" } };
        },
      };
      const chat = await startWebChat({ port: 0, provider: () => provider });
      try {
        const page = await ask(chat, "Weather in Paris?");
        // The call as far as the model has written it: its name and the first piece of its arguments.
        await page.locator(".assistant .tool", { hasText: /^get_weather\(\{"city":$/ }).waitFor();
        expect(await page.textContent(".assistant .text")).toBe("Looking it up");
        expect(await page.locator('.assistant[data-done="true"]').count()).toBe(0);
        release();
        await page.waitForSelector('.assistant[data-done="true"]');
        expect(await page.textContent(".assistant .tool.done")).toBe(
          'get_weather({"city":"Paris"}) → 21 °C and sunny in Paris.',
        );
        expect(await page.locator(".assistant .text").allTextContents()).toEqual(["Looking it up", "Done."]);
      } finally {
        release();
        await chat.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );
});

describe("npx tsx examples/web-chat/server.ts", () => {
  it(
    "listens on PORT on 127.0.0.1, prints its URL and serves the page",
    async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0" };
      delete env.OPENAI_API_KEY;
      const child: ChildProcess = spawn(`${root}node_modules/.bin/tsx`, ["examples/web-chat/server.ts"], {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = "";
          child.stdout?.on("data", (chunk: Buffer) => {
            out += chunk.toString();
            const found = /web chat on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
            if (found?.[1] !== undefined) resolve(found[1]);
          });
          child.once("exit", (code) => reject(new Error(`the server exited (${code}): ${out}`)));
        });
        expect(url).not.toBe("http://127.0.0.1:0/");
        const page = await fetch(url);
        expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
        expect(await page.text()).toContain("<title>toolloop web chat</title>");
      } finally {
        child.kill("SIGTERM");
      }
    },
    BROWSER_TIMEOUT_MS,
  );
});

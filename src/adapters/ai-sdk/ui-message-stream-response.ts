import type { ToolLoopEvent } from "../../tool-loop-event.js";
import { toUIMessageStream } from "./ui-message-stream.js";

/** The headers the AI SDK sends with a UI message stream (`ai`'s `UI_MESSAGE_STREAM_HEADERS`). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  // Tells nginx not to buffer the stream.
  "x-accel-buffering": "no",
});

/** Each chunk as one server-sent event, `data: <json>`, and `data: [DONE]` at the end, as the AI SDK frames it. */
function sseEvents(): TransformStream<unknown, string> {
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(`data: ${JSON.stringify(chunk)}\n\n`);
    },
    flush(controller) {
      controller.enqueue("data: [DONE]\n\n");
    },
  });
}

/**
 * A run's events served as the AI SDK serves a UI message stream (what `useChat`'s default
 * transport reads): the chunks of {@link toUIMessageStream} as server-sent events (`data: <json>`,
 * then `data: [DONE]`), UTF-8, with {@link UI_MESSAGE_STREAM_HEADERS} — `init.headers` are kept and
 * win over them; `init.status` and `init.statusText` apply. Cancelling the body (the client went
 * away) stops iterating the events, which aborts a `streamToolLoop` run. Usable as the return
 * value of a fetch-style route handler (Next.js, Hono, Bun …).
 *
 * @example
 * ```ts
 * export async function POST(request: Request): Promise<Response> {
 *   const { messages } = await request.json();
 *   const run = streamToolLoop({ provider, tools: registry, maxIterations: 10 }, toTranscript(messages), {
 *     signal: request.signal,
 *   });
 *   return toUIMessageStreamResponse(run);
 * }
 * ```
 */
export function toUIMessageStreamResponse(events: AsyncIterable<ToolLoopEvent>, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) {
    if (!headers.has(name)) headers.set(name, value);
  }
  const body = toUIMessageStream(events).pipeThrough(sseEvents()).pipeThrough(new TextEncoderStream());
  return new Response(body, { ...init, headers });
}

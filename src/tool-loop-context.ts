/** Who is talking, passed to every tool call (Go's `channel, chatID` plus abort and metadata). */
export interface ToolLoopContext {
  /** Channel of the conversation (e.g. `"telegram"`). @default "" */
  channel?: string | undefined;
  /** Chat id of the conversation. @default "" */
  chatId?: string | undefined;
  /** Aborts the provider call and every tool call; the loop then rejects with `ToolLoopError`. */
  signal?: AbortSignal | undefined;
  /** Message metadata (message id, user id …) for every call's `context.metadata` and `setMetadata`. */
  metadata?: Readonly<Record<string, string>> | undefined;
}

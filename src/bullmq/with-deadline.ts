import { raceAbort } from "../internal/abort.js";

/** What {@link withDeadline} rejects with when its time is up. @internal */
export class Timeout extends Error {}

/** `work`, or a rejection: `Timeout` after `timeoutMs`, the signal's reason once it aborts. @internal */
export function withDeadline<T>(work: Promise<T>, signal: AbortSignal | undefined, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout()), timeoutMs);
  });
  // Promise.race observes `work`: its later rejection is never unhandled.
  return raceAbort(Promise.race([work, timeout]), signal).finally(() => clearTimeout(timer));
}

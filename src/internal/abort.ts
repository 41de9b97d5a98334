import { setMaxListeners } from "node:events";

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts, so a callee
 * that ignores its signal cannot hang the caller. The listener is removed either way.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** A signal that follows `parent`, and the function that detaches it. */
export interface LinkedSignal {
  signal: AbortSignal | undefined;
  dispose(): void;
}

/**
 * One child signal per loop run, following the caller's signal through a single listener. Every
 * provider call, tool call and the tools' own `fetch`es listen on the child, which has no listener
 * limit: Node would otherwise warn on the console once a turn has more than ten calls.
 */
export function linkSignal(parent: AbortSignal | undefined): LinkedSignal {
  if (parent === undefined) return { signal: undefined, dispose: () => {} };
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return { signal: controller.signal, dispose: () => parent.removeEventListener("abort", onAbort) };
}

import { expect, it } from "vitest";
import { closeOnSigterm } from "../../src/bullmq/close-on-sigterm.js";

// The re-sent SIGTERM (no other listener left) is shown by create-tool-worker.test.ts on a worker process.
it("one listener for all closables; SIGTERM closes each once and leaves other listeners alone", async () => {
  const mine = () => {};
  process.on("SIGTERM", mine); // another listener: so the process is not terminated again here
  const before = process.listenerCount("SIGTERM");
  const closed: string[] = [];
  const closable = (name: string) => ({
    close: async () => {
      closed.push(name);
    },
  });
  const stopA = closeOnSigterm(closable("a"));
  closeOnSigterm(closable("b"));
  const stopC = closeOnSigterm(closable("c"));
  expect(process.listenerCount("SIGTERM")).toBe(before + 1);
  stopC();
  stopC();
  process.emit("SIGTERM", "SIGTERM");
  await new Promise((resolve) => setImmediate(resolve));
  expect(closed).toEqual(["a", "b"]);
  expect(process.listenerCount("SIGTERM")).toBe(before);
  stopA(); // after the signal: nothing to remove, nothing breaks
  expect(process.listenerCount("SIGTERM")).toBe(before);
  process.removeListener("SIGTERM", mine);
});

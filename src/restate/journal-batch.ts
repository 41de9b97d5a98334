import { RestatePromise } from "@restatedev/restate-sdk";

/** One entry of a batch: what it journals, and who waits for the values. */
interface Entry {
  readonly issue: () => readonly RestatePromise<unknown>[];
  readonly resolve: (values: unknown[]) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Journaled steps that arrive together, started in arrival order and awaited through one
 * `RestatePromise.allSettled` (each entry then gets its own steps' values, or its own first
 * failure: one call's failed step never fails the calls beside it). The loop starts a turn's calls concurrently, each in its own
 * `wrapToolCall`: a step started as each call arrives, awaited on its own, would reach the journal
 * in an order set by timing, and Restate's SDK rejects two journaled promises awaited separately at
 * once. Entries that arrive before the event loop's next check phase (`setImmediate`) form one
 * batch: arrivals follow the loop's own order (call order, a queue's first-in-first-out), never a
 * clock, so a replay issues the same steps in the same order.
 */
export class JournalBatch {
  #pending: Entry[] = [];
  #scheduled = false;

  /**
   * Adds an entry: `issue` runs when the batch starts (it must start its steps synchronously and
   * return them); resolves with their values once the whole batch has them.
   */
  add(issue: () => readonly RestatePromise<unknown>[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ issue, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const entries = this.#pending;
    this.#pending = [];
    const steps: RestatePromise<unknown>[] = [];
    const counts: number[] = [];
    try {
      for (const entry of entries) {
        const issued = entry.issue();
        steps.push(...issued);
        counts.push(issued.length);
      }
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      return;
    }
    RestatePromise.allSettled(steps).then(
      (outcomes) => {
        let at = 0;
        entries.forEach((entry, index) => {
          const count = counts[index] ?? 0;
          const mine = outcomes.slice(at, at + count);
          at += count;
          // An entry fails with its own first failed step: a sibling's failure is not its own.
          const failed = mine.find((outcome) => outcome.status === "rejected");
          if (failed === undefined)
            entry.resolve(mine.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value));
          else entry.reject(failed.reason);
        });
      },
      (error: unknown) => {
        for (const entry of entries) entry.reject(error);
      },
    );
  }
}

const batches = new WeakMap<object, { tools: JournalBatch; approvals: JournalBatch }>();

/**
 * The batches of one invocation's context: one for tool calls, one for approvals (kept apart so
 * that a call's tool never waits for another call's approval, which may take days, inside its
 * timeout). Shared by every `durable(ctx)` and `durableApproval(ctx, …)` of that context.
 */
export function batchesOf(ctx: object): { tools: JournalBatch; approvals: JournalBatch } {
  let found = batches.get(ctx);
  if (found === undefined) {
    found = { tools: new JournalBatch(), approvals: new JournalBatch() };
    batches.set(ctx, found);
  }
  return found;
}

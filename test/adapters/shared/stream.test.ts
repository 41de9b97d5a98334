import { describe, expect, it } from "vitest";
import { byIndex, streamEvents, streamIndex, TextParts } from "../../../src/adapters/shared/stream.js";
import { expectUnreadable } from "../../helpers/adapter-fixtures.js";
import { eventsOf } from "../../helpers/stream-parts.js";

async function all(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe("streamEvents", () => {
  it("passes the client's events through in order", async () => {
    expect(
      await all(streamEvents({ provider: "P", stream: eventsOf([1, "two", { three: 3 }]), signal: undefined })),
    ).toEqual([1, "two", { three: 3 }]);
  });

  it.each<[string, unknown]>([
    ["a whole response", { choices: [] }],
    ["null", null],
    ["a sync iterable", [1, 2]],
    ["a string", "data: {}"],
  ])("refuses %s: the client ignored stream: true", async (_name, stream) => {
    await expectUnreadable(
      all(streamEvents({ provider: "P", stream, signal: undefined })),
      "P",
      /^P: the client did not return a stream \(got /,
    );
  });

  it("an abort between events ends the iteration with the signal's reason", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    const seen: unknown[] = [];
    const run = (async () => {
      for await (const event of streamEvents({
        provider: "P",
        stream: eventsOf([1, 2, 3]),
        signal: controller.signal,
      })) {
        seen.push(event);
        if (event === 1) controller.abort(reason);
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(seen).toEqual([1]);
  });

  it("a client stream that ends quietly on abort (as the official clients do) still ends with the reason", async () => {
    const controller = new AbortController();
    async function* quiet() {
      yield 1;
      controller.abort("cancelled");
    }
    await expect(all(streamEvents({ provider: "P", stream: quiet(), signal: controller.signal }))).rejects.toBe(
      "cancelled",
    );
  });

  it("stopping early returns the client's iterator (which cancels its request)", async () => {
    let returned = false;
    async function* source() {
      try {
        yield 1;
        yield 2;
      } finally {
        returned = true;
      }
    }
    for await (const event of streamEvents({ provider: "P", stream: source(), signal: undefined })) {
      expect(event).toBe(1);
      break;
    }
    expect(returned).toBe(true);
  });

  it("an event the client could not parse (its SyntaxError) is an unreadable response, the error its cause", async () => {
    async function* broken() {
      yield 1;
      JSON.parse("{not json");
    }
    const error = await expectUnreadable(
      all(streamEvents({ provider: "P", stream: broken(), signal: undefined })),
      "P",
      /^P: the stream sent an event that is not JSON \(.+\)$/,
    );
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it("any other error of the client propagates as it is", async () => {
    const failure = new TypeError("terminated");
    async function* broken() {
      yield 1;
      throw failure;
    }
    await expect(all(streamEvents({ provider: "P", stream: broken(), signal: undefined }))).rejects.toBe(failure);
  });
});

describe("TextParts", () => {
  it("joins the strings added, ignores anything else, and says whether one came", () => {
    const parts = new TextParts();
    expect(parts.empty).toBe(true);
    expect(parts.text()).toBe("");
    expect(parts.add(undefined)).toBe(false);
    expect(parts.add(3)).toBe(false);
    expect(parts.empty).toBe(true);
    expect(parts.add("")).toBe(true);
    expect(parts.empty).toBe(false);
    parts.add("ab");
    parts.add("c");
    expect(parts.text()).toBe("abc");
  });
});

describe("streamIndex", () => {
  it.each<[unknown, number | undefined]>([
    [0, 0],
    [7, 7],
    [-1, undefined],
    [1.5, undefined],
    [Number.NaN, undefined],
    [2 ** 60, undefined],
    ["0", undefined],
    [null, undefined],
    [undefined, undefined],
  ])("reads %j as %j", (value, expected) => {
    expect(streamIndex(value)).toBe(expected);
  });
});

describe("byIndex", () => {
  it("orders the entries by their index, whatever order they came in", () => {
    expect(
      byIndex(
        new Map([
          [10, "c"],
          [0, "a"],
          [2, "b"],
        ]),
      ),
    ).toEqual(["a", "b", "c"]);
  });
});

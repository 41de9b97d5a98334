import { describe, expect, it } from "vitest";
import { checkedClient, checkModel, checkProviderName } from "../../../src/adapters/shared/factory-options.js";

describe("checkedClient", () => {
  const check = (options: unknown) =>
    checkedClient({
      factory: "createXProvider",
      options: options as { client: unknown },
      option: "client",
      method: ["chat", "create"],
      expected: "an X client (chat.create)",
    });

  it.each<[unknown, string]>([
    [undefined, "undefined"],
    [null, "null"],
    ["gpt", '"gpt"'],
    [[1], "[1]"],
  ])("refuses %j as options", (options, shown) => {
    expect(() => check(options)).toThrow(new TypeError(`createXProvider: options must be an object, got ${shown}`));
  });

  it("returns a client with the method, also a class instance or a function holding it, from any options object", () => {
    const plain = { chat: { create() {} } };
    expect(check({ client: plain })).toBe(plain);
    const instance = new (class Client {
      chat = { create() {} };
    })();
    expect(
      check(
        new (class Options {
          client = instance;
        })(),
      ),
    ).toBe(instance);
    const callable = Object.assign(() => {}, { chat: { create() {} } });
    expect(check({ client: callable })).toBe(callable);
  });

  it.each<[unknown, string]>([
    [undefined, "undefined"],
    [{}, "{}"],
    [{ chat: {} }, '{"chat":{}}'],
    [{ chat: { create: "x" } }, '{"chat":{"create":"x"}}'],
    [new (class Client {})(), "Client"],
  ])("refuses the client %j, echoing it", (client, shown) => {
    expect(() => check({ client })).toThrow(
      new TypeError(`createXProvider: client must be an X client (chat.create), got ${shown}`),
    );
  });
});

describe("checkModel", () => {
  it("gives the fallback for no model, and the model otherwise", () => {
    expect(checkModel("createXProvider", undefined, "m-1")).toBe("m-1");
    expect(checkModel("createXProvider", "m-2", "m-1")).toBe("m-2");
  });

  it.each<[unknown, string]>([
    ["", '""'],
    [4, "4"],
    [null, "null"],
  ])("refuses %j", (model, shown) => {
    expect(() => checkModel("createXProvider", model, "m")).toThrow(
      new TypeError(`createXProvider: model must be a non-empty string, got ${shown}`),
    );
  });
});

describe("checkProviderName", () => {
  it("gives the fallback for no name, and the name otherwise", () => {
    expect(checkProviderName("createXProvider", undefined, "openai")).toBe("openai");
    expect(checkProviderName("createXProvider", "groq", "openai")).toBe("groq");
  });

  it.each<[unknown, string]>([
    ["", '""'],
    [4, "4"],
  ])("refuses %j", (name, shown) => {
    expect(() => checkProviderName("createXProvider", name, "openai")).toThrow(
      new TypeError(`createXProvider: providerName must be a non-empty string, got ${shown}`),
    );
  });
});

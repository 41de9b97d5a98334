import { describe, expect, it } from "vitest";
import { checkClientMethod, checkFactoryOptions, checkModel } from "../../../src/adapters/shared/factory-options.js";

describe("checkFactoryOptions", () => {
  it.each<[unknown, string]>([
    [undefined, "undefined"],
    [null, "null"],
    ["gpt", '"gpt"'],
    [[1], "[1]"],
  ])("refuses %j as options", (options, shown) => {
    expect(() => checkFactoryOptions("createXProvider", options)).toThrow(
      new TypeError(`createXProvider: options must be an object, got ${shown}`),
    );
  });

  it("accepts any object", () => {
    expect(() => checkFactoryOptions("createXProvider", {})).not.toThrow();
    expect(() => checkFactoryOptions("createXProvider", new (class Options {})())).not.toThrow();
  });
});

describe("checkClientMethod", () => {
  const check = (value: unknown) =>
    checkClientMethod({
      factory: "createXProvider",
      option: "client",
      value,
      method: ["chat", "create"],
      expected: "an X client (chat.create)",
    });

  it("accepts an object with the method, also a class instance or a function holding it", () => {
    expect(() => check({ chat: { create() {} } })).not.toThrow();
    expect(() =>
      check(
        new (class Client {
          chat = { create() {} };
        })(),
      ),
    ).not.toThrow();
    expect(() => check(Object.assign(() => {}, { chat: { create() {} } }))).not.toThrow();
  });

  it.each<[unknown, string]>([
    [undefined, "undefined"],
    [{}, "{}"],
    [{ chat: {} }, '{"chat":{}}'],
    [{ chat: { create: "x" } }, '{"chat":{"create":"x"}}'],
    [new (class Client {})(), "Client"],
  ])("refuses %j, echoing it", (value, shown) => {
    expect(() => check(value)).toThrow(
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

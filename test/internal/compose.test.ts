import { describe, expect, it } from "vitest";
import { compose, type Next } from "../../src/internal/compose.js";

type Layer = (request: string, next: Next<string, string>) => Promise<string>;
const invoke = (layer: Layer, request: string, next: Next<string, string>) => layer(request, next);
const step: Next<string, string> = async (request) => `step(${request})`;

describe("compose", () => {
  it("layers[0] wraps layers[1] … wraps the step; each may change the request and the result", async () => {
    const chain = compose<Layer, string, string>(
      [
        async (request, next) => `a(${await next(`${request}+a`)})`,
        async (request, next) => `b(${await next(`${request}+b`)})`,
      ],
      invoke,
    );
    expect(await chain("x", step)).toBe("a(b(step(x+a+b)))");
  });

  it("with no layer the chain is the step itself", async () => {
    expect(await compose<Layer, string, string>([], invoke)("x", step)).toBe("step(x)");
  });

  it("a layer may skip next, or call it again; the step is the one given with each call", async () => {
    let steps = 0;
    const counting: Next<string, string> = async (request) => `${request}${++steps}`;
    const chain = compose<Layer, string, string>(
      [async (request, next) => (request === "cached" ? "hit" : `${await next(request)},${await next(request)}`)],
      invoke,
    );
    expect(await chain("cached", counting)).toBe("hit");
    expect(await chain("r", counting)).toBe("r1,r2");
    expect(await chain("s", async (request) => `other ${request}`)).toBe("other s,other s");
  });

  it("concurrent calls of one chain do not share their next", async () => {
    const chain = compose<Layer, string, string>([async (request, next) => next(request)], invoke);
    const slow: Next<string, string> = (request) =>
      new Promise((resolve) => setTimeout(() => resolve(`slow ${request}`), 5));
    const results = await Promise.all([chain("1", slow), chain("2", step)]);
    expect(results).toEqual(["slow 1", "step(2)"]);
  });

  it("refuse sees what each layer passes to next, with that layer: its answer instead, or undefined to go on", async () => {
    const outer: Layer = async (request, next) => `outer(${await next(`${request}+outer`)})`;
    const inner: Layer = async (request, next) => `inner(${await next(`${request}+inner`)})`;
    const seen: string[] = [];
    const refuse = (layer: Layer, sent: string) => {
      seen.push(`${layer === outer ? "outer" : "inner"}:${sent}`);
      return sent.includes("bad") ? Promise.resolve(`refused ${sent}`) : undefined;
    };
    const chain = compose<Layer, string, string>([outer, inner], invoke, refuse);
    expect(await chain("x", step)).toBe("outer(inner(step(x+outer+inner)))");
    expect(seen).toEqual(["outer:x+outer", "inner:x+outer+inner"]);
    expect(await chain("bad", step)).toBe("outer(refused bad+outer)");
  });
});

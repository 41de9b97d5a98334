import { describe, expect, it } from "vitest";
import { compose, composeChecked, type Next } from "../../src/internal/compose.js";

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

describe("composeChecked", () => {
  type Hook = (request: string, next: Next<string, string>) => unknown;
  const hook = (layer: Hook, request: string, next: Next<string, string>) => layer(request, next);
  const checks: string[] = [];
  const check = async (_layer: Hook, answer: unknown, context: string) => {
    checks.push(context);
    try {
      return `checked(${String(await answer)})`;
    } catch (error) {
      return `caught(${(error as Error).message})`;
    }
  };
  const before = (request: string) => `before ${request}`;

  it("a layer that answers with what its next returned gets that very promise back, unchecked", async () => {
    checks.length = 0;
    const inner = Promise.resolve("inner");
    const chain = composeChecked<Hook, string, string, string>([(request, next) => next(request)], hook, check, before);
    expect(chain("x", () => inner)).toBe(inner);
    expect(checks).toEqual([]);
  });

  it("any other answer, a throw or a rejection goes to check, with what before read from the request", async () => {
    checks.length = 0;
    const layers: Hook[] = [(request, next) => next(`${request}!`), async (request, next) => `${await next(request)}+`];
    const chain = composeChecked<Hook, string, string, string>(layers, hook, check, before);
    // The outer layer passes through: only the inner one is checked, with its own request.
    expect(await chain("x", async (request) => `step(${request})`)).toBe("checked(step(x!)+)");
    expect(checks).toEqual(["before x!"]);
    const throwing = composeChecked<Hook, string, string, string>(
      [
        () => {
          throw new Error("boom");
        },
      ],
      hook,
      check,
      before,
    );
    expect(await throwing("y", async () => "never")).toBe("caught(boom)");
    const plain = composeChecked<Hook, string, string, string>([() => "not a promise"], hook, check, before);
    expect(await plain("z", async () => "never")).toBe("checked(not a promise)");
    expect(checks).toEqual(["before x!", "before y", "before z"]);
  });

  it("a layer that calls next twice is checked: its answer is not the promise its next returned last", async () => {
    checks.length = 0;
    let steps = 0;
    const chain = composeChecked<Hook, string, string, string>(
      [
        (request, next) => {
          const first = next(request);
          void next(request);
          return first;
        },
      ],
      hook,
      check,
      before,
    );
    expect(await chain("r", async (request) => `${request}${++steps}`)).toBe("checked(r1)");
    expect(steps).toBe(2);
  });

  it("refuse sees what each layer passes to next: its answer instead (and that layer's pass-through), or undefined to go on", async () => {
    checks.length = 0;
    const refuse = (_layer: Hook, sent: string) =>
      sent.includes("bad") ? Promise.resolve(`refused ${sent}`) : undefined;
    const chain = composeChecked<Hook, string, string, string>(
      [(request, next) => next(request)],
      hook,
      check,
      before,
      refuse,
    );
    expect(await chain("bad", async () => "never")).toBe("refused bad");
    expect(await chain("good", async (request) => `step(${request})`)).toBe("step(good)");
    expect(checks).toEqual([]);
  });
});

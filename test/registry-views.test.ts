import { describe, expect, it } from "vitest";
import { convertDefinitions, type DefinitionFormat } from "../src/definition-format.js";
import type { DispatchTarget } from "../src/dispatch-tool-call.js";
import type { ToolDefinition } from "../src/index.js";
import { DefinitionCache } from "../src/internal/definition-cache.js";
import { HiddenTools } from "../src/internal/hidden-tools.js";
import { resolveLogger } from "../src/internal/logger.js";
import { PromotionScope } from "../src/internal/promotion-scope.js";
import { prepareTool, type RegisteredTool } from "../src/internal/registered-tool.js";
import { RegistryViews } from "../src/registry-views.js";
import { tool } from "./helpers/loop-tools.js";

/** The registry's pieces as it holds them: visible tools `alpha` and `zeta`, and the `hidden` ones. */
function viewsOf(...hiddenNames: string[]) {
  const tools = new Map<string, RegisteredTool>();
  const hidden = new HiddenTools();
  for (const name of ["alpha", "zeta", ...hiddenNames]) tools.set(name, prepareTool(tool(name, () => name)));
  for (const name of hiddenNames) hidden.add(name);
  const definitions = new DefinitionCache<DefinitionFormat>(tools, hidden, convertDefinitions);
  const dispatch: DispatchTarget = {
    get: (name) => tools.get(name),
    names: () => definitions.names(),
    logger: resolveLogger(undefined, "test"),
    logPayloads: false,
  };
  return { views: new RegistryViews(tools, hidden, definitions, dispatch), definitions, dispatch };
}

const namesOf = (definitions: readonly ToolDefinition[]) => definitions.map((each) => each.function.name);

describe("RegistryViews.definitions", () => {
  it("offers the cached definitions themselves while the run promoted nothing", () => {
    const { views, definitions } = viewsOf("hidden_b");
    const base = definitions.definitions("openai");
    expect(views.definitions({ scope: new PromotionScope(), turn: 1 })).toBe(base);
    expect(namesOf(base as readonly ToolDefinition[])).toEqual(["alpha", "zeta"]);
  });

  it("adds the hidden tools the run promoted, in name order, for their window only, the same array while nothing changes", () => {
    const { views, definitions } = viewsOf("hidden_b");
    const scope = new PromotionScope();
    scope.promote(["hidden_b"], 2, 1);
    expect(views.definitions({ scope, turn: 1 })).toBe(definitions.definitions("openai"));
    const offered = views.definitions({ scope, turn: 2 });
    expect(namesOf(offered)).toEqual(["alpha", "hidden_b", "zeta"]);
    expect(Object.isFrozen(offered)).toBe(true);
    expect(views.definitions({ scope, turn: 3 })).toBe(offered);
    expect(views.definitions({ scope, turn: 4 })).toBe(definitions.definitions("openai"));
  });
});

describe("RegistryViews.target", () => {
  it("is the registry's own dispatch target when it has no hidden tools", () => {
    const { views, dispatch } = viewsOf();
    expect(views.target({ scope: new PromotionScope(), turn: 1 })).toBe(dispatch);
  });

  it("finds a promoted hidden tool only once the model was shown it, and lists it as available then", () => {
    const { views } = viewsOf("hidden_b");
    const scope = new PromotionScope();
    scope.promote(["hidden_b"], 2, 1);
    const target = views.target({ scope, turn: 2 });
    expect(target.get("hidden_b")).toBeUndefined();
    expect(target.names()).toEqual(["alpha", "zeta"]);
    scope.showOffered(2);
    expect(target.get("hidden_b")?.tool.name).toBe("hidden_b");
    expect(target.names()).toEqual(["alpha", "hidden_b", "zeta"]);
    expect(target.get("alpha")?.tool.name).toBe("alpha");
  });

  it("never finds a hidden tool another run promoted", () => {
    const { views } = viewsOf("hidden_b");
    const other = new PromotionScope();
    other.promote(["hidden_b"], 2, 1);
    other.showOffered(2);
    expect(views.target({ scope: new PromotionScope(), turn: 2 }).get("hidden_b")).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { budgetLimits, checkBudgetCost } from "../../src/internal/schema-budget.js";
import { NO_COST, REGISTRY_SCHEMA_LIMITS, SchemaLimitError } from "../../src/internal/schema-cost.js";

describe("an import's share of the registry's schema limits", () => {
  it("is the share of each measure, rounded down", () => {
    expect(budgetLimits({ name: "x", share: 1 })).toEqual(REGISTRY_SCHEMA_LIMITS);
    expect(budgetLimits({ name: "x", share: 0.25 })).toEqual({
      subschemas: 25_000,
      keywords: 125_000,
      patterns: 2_500,
      literals: 1_250_000,
      compiled: 25_000,
    });
    expect(budgetLimits({ name: "x", share: 1e-9 }).subschemas).toBe(0);
  });

  it("refuses a cost that would take the budget past a measure, naming it, the budget and the share", () => {
    const budget = { name: 'MCP server "m"', share: 0.25 };
    const cost = { ...NO_COST, patterns: 100 };
    expect(() => checkBudgetCost(budget, { ...NO_COST, patterns: 2_400 }, cost)).not.toThrow();
    expect(() => checkBudgetCost(budget, { ...NO_COST, patterns: 2_401 }, cost)).toThrow(SchemaLimitError);
    expect(() => checkBudgetCost(budget, { ...NO_COST, patterns: 2_401 }, cost)).toThrow(
      `with it, the schemas of MCP server "m" would have 2501 patterns, at most 2500 (its share, 0.25, of the registry's; this one has 100)`,
    );
  });
});

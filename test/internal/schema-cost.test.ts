import { describe, expect, it } from "vitest";
import {
  addCost,
  checkRegistryCost,
  checkSchemaCost,
  countText,
  NO_COST,
  REGISTRY_SCHEMA_LIMITS,
  SCHEMA_LIMITS,
  SchemaLimitError,
  subtractCost,
} from "../../src/internal/schema-cost.js";

const cost = (part: Partial<typeof NO_COST>) => ({ ...NO_COST, ...part });

describe("schema costs and their limits", () => {
  it("adds and subtracts measure by measure", () => {
    const a = { subschemas: 1, keywords: 2, patterns: 3, literals: 4, compiled: 5 };
    const b = { subschemas: 10, keywords: 20, patterns: 30, literals: 40, compiled: 50 };
    expect(addCost(a, b)).toEqual({ subschemas: 11, keywords: 22, patterns: 33, literals: 44, compiled: 55 });
    expect(subtractCost(addCost(a, b), b)).toEqual(a);
  });

  it("refuses a schema over a per-schema limit, naming the first measure over it", () => {
    expect(() => checkSchemaCost(cost({ patterns: SCHEMA_LIMITS.patterns }))).not.toThrow();
    expect(() => checkSchemaCost(cost({ literals: 500_001, compiled: 9_999 }))).toThrow(SchemaLimitError);
    expect(() => checkSchemaCost(cost({ literals: 500_001, compiled: 9_999 }))).toThrow(
      "it has 500001 characters of enum and const values (its $refs followed), at most 500000",
    );
    expect(() => checkSchemaCost(cost({ subschemas: 1e16 }))).toThrow("it has more than 10^15 subschemas");
  });

  it("refuses a schema that would take the registry past its total", () => {
    const used = cost({ compiled: REGISTRY_SCHEMA_LIMITS.compiled - 10 });
    expect(() => checkRegistryCost(used, cost({ compiled: 10 }))).not.toThrow();
    expect(() => checkRegistryCost(used, cost({ compiled: 11 }))).toThrow(
      `with it, the registry's schemas would have ${REGISTRY_SCHEMA_LIMITS.compiled + 1} units of compiling`,
    );
  });

  it("shows an exponential count as such", () => {
    expect(countText(12)).toBe("12");
    expect(countText(1e15)).toBe("more than 10^15");
  });
});

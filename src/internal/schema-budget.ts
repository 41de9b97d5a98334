import { MEASURES, REGISTRY_SCHEMA_LIMITS, type SchemaCost, SchemaLimitError } from "./schema-cost.js";

/** A share of a registry's schema limits, as the public `SchemaBudget` holds it. */
export interface BudgetShare {
  /** Names the budget in a refusal. */
  readonly name: string;
  /** The share of each of the registry's limits, in (0, 1]. */
  readonly share: number;
}

/** What each measure of `budget` allows: its share of the registry's limits, rounded down. */
export function budgetLimits(budget: BudgetShare): SchemaCost {
  const limit = (measure: keyof SchemaCost) => Math.floor(REGISTRY_SCHEMA_LIMITS[measure] * budget.share);
  return {
    subschemas: limit("subschemas"),
    keywords: limit("keywords"),
    patterns: limit("patterns"),
    literals: limit("literals"),
    compiled: limit("compiled"),
  };
}

/**
 * Throws a {@link SchemaLimitError} when the tools of `budget`, whose schemas already cost `used`,
 * cannot take one more that costs `cost`.
 */
export function checkBudgetCost(budget: BudgetShare, used: SchemaCost, cost: SchemaCost): void {
  const limits = budgetLimits(budget);
  for (const [measure, what] of MEASURES) {
    const total = used[measure] + cost[measure];
    if (total > limits[measure]) {
      throw new SchemaLimitError(
        `with it, the schemas of ${budget.name} would have ${total} ${what}, at most ${limits[measure]} (its share, ${budget.share}, of the registry's; this one has ${cost[measure]})`,
      );
    }
  }
}

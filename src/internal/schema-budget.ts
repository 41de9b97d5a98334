import { checkTotalCost, REGISTRY_SCHEMA_LIMITS, type SchemaCost } from "./schema-cost.js";

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
 * Throws a `SchemaLimitError` when the tools of `budget`, whose schemas already cost `used`,
 * cannot take one more that costs `cost`.
 */
export function checkBudgetCost(budget: BudgetShare, used: SchemaCost, cost: SchemaCost): void {
  checkTotalCost(
    used,
    cost,
    budgetLimits(budget),
    `the schemas of ${budget.name}`,
    `its share, ${budget.share}, of the registry's; `,
  );
}

import type { Ajv, ErrorObject } from "ajv";

// ─── uniqueItems in linear time ─────────────────────────────────────────────────────────────────
//
// Ajv compares an array's non-scalar items pair by pair: O(n²) deep comparisons, synchronous, so
// 20,000 small objects from the model block the event loop for seconds (`maxItems` does not help
// with `allErrors`). The keyword is replaced by one pass that keys each item by a canonical JSON
// text (object keys sorted, as JSON Schema equality ignores their order).

/** JSON text with object keys sorted: equal for equal JSON values, whatever their key order. @internal */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

type UniqueItemsValidator = ((schema: unknown, data: unknown[]) => boolean) & { errors?: Partial<ErrorObject>[] };

const uniqueItems: UniqueItemsValidator = (schema, data) => {
  uniqueItems.errors = [];
  if (schema !== true) return true;
  const seen = new Map<string, number>();
  for (let index = 0; index < data.length; index++) {
    const key = canonicalJson(data[index]);
    const first = seen.get(key);
    if (first !== undefined) {
      uniqueItems.errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${first} and ${index} are identical)`,
          params: { i: index, j: first },
        },
      ];
      return false;
    }
    seen.set(key, index);
  }
  return true;
};

/** Replaces Ajv's uniqueItems keyword with the linear one. */
export function withLinearUniqueItems<T extends Pick<Ajv, "removeKeyword" | "addKeyword">>(ajv: T): T {
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", errors: true, validate: uniqueItems });
  return ajv;
}

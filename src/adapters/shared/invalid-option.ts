/**
 * The `TypeError` every adapter factory throws for a bad option:
 * `<factory>: <option> must be <expected>, got <shown>`.
 */
export function invalidOption(factory: string, option: string, expected: string, shown: string): TypeError {
  return new TypeError(`${factory}: ${option} must be ${expected}, got ${shown}`);
}

/** A value as JSON text for an error message (`String(value)` when it has no JSON form). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

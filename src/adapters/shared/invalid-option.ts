/**
 * The `TypeError` every adapter factory throws for a bad option:
 * `<factory>: <option> must be <expected>, got <shown>`.
 */
export function invalidOption(factory: string, option: string, expected: string, shown: string): TypeError {
  return new TypeError(`${factory}: ${option} must be ${expected}, got ${shown}`);
}

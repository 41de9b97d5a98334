import type { ToolDefinition } from "../../provider.js";

/** Converts the loop's tool definitions to what one API's request carries. */
export type ToolsConversion<T extends object> = (definitions: readonly ToolDefinition[]) => T;

/**
 * `convert`, run once per definitions array instead of on every step. The loop hands every step
 * the registry's cached definitions: one frozen array until the registry changes. For a frozen
 * array the result is kept (in a `WeakMap`, so it goes with the array) and returned again; a
 * mutable array — a caller's own, which may change between calls — is converted on every call.
 * A frozen array's definitions are taken to be unchanging too (the registry's are).
 *
 * What `convert` returns is shared by every step: it must not be changed afterwards, by the
 * adapter or by the client it is sent to (see {@link frozenTools}).
 */
export function convertOncePerArray<T extends object>(convert: ToolsConversion<T>): ToolsConversion<T> {
  const cache = new WeakMap<readonly ToolDefinition[], T>();
  return (definitions) => {
    if (!Object.isFrozen(definitions)) return convert(definitions);
    let converted = cache.get(definitions);
    if (converted === undefined) {
      converted = convert(definitions);
      cache.set(definitions, converted);
    }
    return converted;
  };
}

/**
 * `tools` frozen, the array and each tool (shallowly): a client that tried to rewrite what
 * {@link convertOncePerArray} shares between steps would fail loudly instead of changing what
 * later steps send.
 */
export function frozenTools<T extends object>(tools: T[]): readonly T[] {
  for (const tool of tools) Object.freeze(tool);
  return Object.freeze(tools);
}

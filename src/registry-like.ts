import { isRecord } from "./internal/describe.js";
import { ToolRegistry } from "./tool-registry.js";

/** What the loop needs of a registry: the public methods, which a registry of any installed copy has. */
export type RegistryLike = Pick<ToolRegistry, "count" | "executeWithContext" | "toProviderDefs">;

/** `true` for a `ToolRegistry`, also one of another installed copy (read by its public methods). */
export function isRegistryLike(value: unknown): value is RegistryLike {
  if (value instanceof ToolRegistry) return true;
  if (!isRecord(value)) return false;
  const candidate = value as Partial<Record<keyof RegistryLike, unknown>>;
  return (
    typeof candidate.count === "function" &&
    typeof candidate.executeWithContext === "function" &&
    typeof candidate.toProviderDefs === "function"
  );
}

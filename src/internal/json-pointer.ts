import { isRecord } from "./describe.js";

/** One segment of a JSON Pointer (RFC 6901) unescaped: `~1` is `/`, `~0` is `~`. */
export function unescapePointerSegment(segment: string): string {
  return segment.replaceAll("~1", "/").replaceAll("~0", "~");
}

/**
 * What a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, `#/properties/a/items` …) points to in
 * `root`, or `undefined` when it is not local, malformed, or points nowhere. Only own properties
 * are followed (a schema's `"__proto__"` key is data, not a way out). Never throws.
 */
export function resolveLocalRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith("#")) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined; // a malformed %-escape
  }
  if (pointer === "") return root;
  if (!pointer.startsWith("/")) return undefined;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const part = unescapePointerSegment(raw);
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(part)) node = node[Number(part)];
    else if (isRecord(node) && Object.hasOwn(node, part)) node = node[part];
    else return undefined;
  }
  return node;
}

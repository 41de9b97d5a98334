import type * as AjvResolve from "ajv/dist/compile/resolve.js";
import type { UriResolver } from "ajv/dist/types/index.js";
import { isRecord } from "./describe.js";
import { unescapePointerSegment } from "./json-pointer.js";
import { require } from "./require.js";

// ─── Resolving $ref as Ajv does ─────────────────────────────────────────────────────────────────
//
// The bound is only as good as the resolution: a `$ref` followed to another target than Ajv's
// would measure another schema. So references are resolved with Ajv's own functions (its URI
// resolver, its collection of `$id`s and anchors) in the order Ajv's `resolveRef` tries them; a
// reference that cannot be followed that way is refused, never counted as free.

interface AjvHelpers {
  resolve: typeof AjvResolve;
  uri: UriResolver;
}
let helpers: AjvHelpers | undefined;

function ajvHelpers(): AjvHelpers {
  helpers ??= {
    resolve: require("ajv/dist/compile/resolve.js") as typeof AjvResolve,
    uri: (require("ajv/dist/runtime/uri.js") as { default: UriResolver }).default,
  };
  return helpers;
}

/** Ajv's meta-schemas, which every Ajv instance holds: a `$ref` to one is a known, fixed-size schema. */
const META_SCHEMA = /^https?:\/\/json-schema\.org\//;
/** Path segments after which Ajv does not let an `$id` change the base URI (a map of names, not a schema). */
const PREVENT_SCOPE_CHANGE = new Set(["properties", "patternProperties", "enum", "dependencies", "definitions"]);
/** Most `$id` redirections followed for one reference (Ajv follows them without a bound). */
const MAX_REDIRECTIONS = 64;

/** A subschema: an object or a boolean. */
export type SchemaValue = Record<string, unknown> | boolean;
/** Where a reference lands: a subschema and its base URI. */
export interface Target {
  schema: SchemaValue;
  /** The base URI the target's own references resolve against. */
  base: string;
}
/** A reference to a meta-schema. */
export const META = Symbol("meta-schema");

/** Resolves `$ref`s of one schema as Ajv does. */
export class RefResolver {
  readonly #root: Record<string, unknown>;
  readonly rootBase: string;
  readonly #helpers: AjvHelpers;
  /** Absolute `$id`s and anchors of the document → the URI of what they name (Ajv's `this.refs`). */
  #ids: Record<string, unknown> | undefined;
  /** Anchors of a document without a base URI (Ajv's `localRefs`). */
  #local: Record<string, unknown> = {};

  constructor(root: Record<string, unknown>) {
    this.#root = root;
    this.#helpers = ajvHelpers();
    this.rootBase = this.#helpers.resolve.normalizeId(typeof root.$id === "string" ? root.$id : "");
  }

  /** The document's `$id`s and anchors, collected on the first reference (a schema without one never pays for it). */
  #collectIds(): Record<string, unknown> {
    if (this.#ids !== undefined) return this.#ids;
    // Ajv's own collection (it throws, as Ajv would, for an ambiguous one); `this` is what it
    // reads of an Ajv instance.
    const ids: Record<string, unknown> = {};
    const collect = this.#helpers.resolve.getSchemaRefs as unknown as (
      this: { opts: { schemaId: string; uriResolver: UriResolver }; refs: Record<string, unknown> },
      schema: unknown,
      baseId: string,
    ) => Record<string, unknown>;
    const options = { schemaId: "$id", uriResolver: this.#helpers.uri };
    this.#local = collect.call({ opts: options, refs: ids }, this.#root, this.rootBase);
    this.#ids = ids;
    return ids;
  }

  /** The base URI inside a subschema reached from `base` (its `$id` applies, as in Ajv's `updateContext`). */
  enter(base: string, schema: Record<string, unknown>): string {
    const id = schema.$id;
    return typeof id === "string" && id !== "" ? this.#helpers.resolve.resolveUrl(this.#helpers.uri, base, id) : base;
  }

  /**
   * The URI Ajv compiles the target of `$ref: ref` at `base` under: one function per URI, so a
   * target written two ways is compiled twice. `null` for the document's root itself (Ajv calls
   * the function it is compiling) and for what Ajv cannot resolve (`resolve` refuses it).
   */
  key(base: string, ref: string): string | null {
    if ((ref === "#" || ref === "#/") && base === this.rootBase) return null;
    try {
      return this.#helpers.resolve.resolveUrl(this.#helpers.uri, base, ref);
    } catch {
      return null;
    }
  }

  /** What `$ref: ref` at base URI `base` names: a subschema, a meta-schema, or `undefined` when Ajv could not resolve it either. */
  resolve(base: string, ref: string): Target | typeof META | undefined {
    const { resolve, uri } = this.#helpers;
    // Ajv's ref keyword: "#" at the root's base is the root itself.
    if ((ref === "#" || ref === "#/") && base === this.rootBase) return { schema: this.#root, base };
    this.#collectIds();
    let target: string;
    try {
      target = resolve.resolveUrl(uri, base, ref);
    } catch {
      return undefined;
    }
    const found = this.#follow(target);
    if (found !== undefined) return found;
    const local = this.#local[target];
    return isSchemaValue(local) ? { schema: local, base } : undefined;
  }

  /** Ajv's `resolve`: `$id` redirections, then the root, a meta-schema, or a JSON Pointer. */
  #follow(uri: string): Target | typeof META | undefined {
    const ids = this.#collectIds();
    let target = uri;
    for (let hops = 0; typeof ids[target] === "string"; hops++) {
      if (hops >= MAX_REDIRECTIONS) return undefined;
      target = ids[target] as string;
    }
    if (target === this.rootBase && target !== "" && !target.startsWith("#")) {
      return { schema: this.#root, base: this.rootBase };
    }
    return this.#resolveSchema(target, 0);
  }

  /** Ajv's `resolveSchema`. */
  #resolveSchema(ref: string, depth: number): Target | typeof META | undefined {
    if (depth >= MAX_REDIRECTIONS) return undefined;
    const { resolve, uri } = this.#helpers;
    const parsed = uri.parse(ref);
    const refPath = resolve._getFullPath(uri, parsed);
    if (Object.keys(this.#root).length > 0 && refPath === resolve.getFullPath(uri, this.rootBase, undefined)) {
      return this.#pointer(parsed.fragment, { schema: this.#root, base: this.rootBase });
    }
    const id = resolve.normalizeId(refPath);
    const redirect = this.#collectIds()[id];
    if (typeof redirect === "string") {
      const resource = this.#resolveSchema(redirect, depth + 1);
      if (resource === undefined || resource === META || typeof resource.schema !== "object") return resource;
      return this.#pointer(parsed.fragment, resource);
    }
    return META_SCHEMA.test(id) ? META : undefined;
  }

  /** Ajv's `getJsonPointer`: the subschema at a fragment's pointer, own properties only. */
  #pointer(fragment: string | undefined, from: Target): Target | undefined {
    if (fragment?.[0] !== "/") return undefined;
    let { schema, base } = from;
    for (const part of fragment.slice(1).split("/")) {
      let key: string;
      try {
        key = unescapePointerSegment(decodeURIComponent(part));
      } catch {
        return undefined; // a malformed %-escape
      }
      let next: unknown;
      if (Array.isArray(schema) && /^(0|[1-9]\d*)$/.test(key)) next = schema[Number(key)];
      else if (isRecord(schema) && Object.hasOwn(schema, key)) next = schema[key];
      else return undefined;
      schema = next as SchemaValue;
      if (isRecord(schema) && typeof schema.$id === "string" && !PREVENT_SCOPE_CHANGE.has(part)) {
        base = this.#helpers.resolve.resolveUrl(this.#helpers.uri, base, schema.$id);
      }
    }
    return isSchemaValue(schema) ? { schema, base } : undefined;
  }
}

/** `true` for a subschema (an object or a boolean). */
export function isSchemaValue(value: unknown): value is SchemaValue {
  return typeof value === "boolean" || isRecord(value);
}

import { createRequire } from "node:module";

/**
 * Node's `require` for the core's CommonJS dependencies (Ajv, re2js, zod-to-json-schema), which it
 * loads when first needed rather than at import: one for every module of the core.
 */
export const require = createRequire(import.meta.url);

/** Minified and min+gzip (level 9) bytes of a built entry point, dependencies external (see entry-size.mjs). */
export function entrySize(
  file: string,
  manifest: { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> },
): Promise<{ minifiedBytes: number; gzipBytes: number }>;

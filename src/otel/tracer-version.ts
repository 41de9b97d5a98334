/**
 * The instrumentation version the default tracer names (`trace.getTracer("toolloop", version)`):
 * the package's version, kept equal to package.json's by test/otel/tracer-version.test.ts.
 * @internal
 */
export const TRACER_VERSION = "0.1.0";

/** The instrumentation scope name of the default tracer. @internal */
export const TRACER_NAME = "toolloop";

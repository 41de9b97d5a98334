import { measure } from "mitata";

/** One measured figure: the median of the samples, with the smallest and largest sample. */
export interface Figure {
  median: number;
  min: number;
  max: number;
  /** How many samples (or runs) the figure is made of. */
  samples: number;
  unit: "µs" | "ms" | "B" | "kB" | "×";
}

/** Options of {@link compare}. */
export interface CompareOptions {
  /** Runs of each case before measuring, so the JIT has settled. @default 100 */
  warmup?: number | ((name: string) => number);
  /** Rounds; each round measures every case once, in turn. @default 5 */
  rounds?: number;
  /** Measuring time of one case in one round, in milliseconds. @default 150 */
  roundMs?: number;
  /** Minimum samples of one case in one round. @default 4 */
  minSamples?: number;
  /** Unit of the returned figures. @default "µs" */
  unit?: "µs" | "ms";
  /** Called after each case of each round. */
  onSample?: (name: string, round: number, medianOfRound: number) => void;
}

/**
 * Times async cases with mitata, interleaved: each round measures every case in turn, so load
 * from other processes on a shared machine hits all cases alike and their ratios stay fair.
 * mitata batches fast calls (a sample is then the mean of 64 calls); the figure is the median of
 * every sample of every round, with the smallest and largest sample.
 */
export async function compare(
  cases: Record<string, () => Promise<unknown>>,
  options: CompareOptions = {},
): Promise<Record<string, Figure>> {
  const samples = await sampleCases(cases, options);
  const figures: Record<string, Figure> = {};
  for (const [name, values] of Object.entries(samples)) figures[name] = summarize(values, options.unit ?? "µs");
  return figures;
}

/** {@link compare} without the summary: every sample of every case, in the unit asked for. */
export async function sampleCases(
  cases: Record<string, () => Promise<unknown>>,
  options: CompareOptions = {},
): Promise<Record<string, number[]>> {
  const { warmup = 100, rounds = 5, roundMs = 150, minSamples = 4, unit = "µs", onSample } = options;
  const scale = unit === "µs" ? 1e3 : 1e6;
  const samples = new Map<string, number[]>();
  for (const [name, fn] of Object.entries(cases)) {
    const count = typeof warmup === "function" ? warmup(name) : warmup;
    for (let index = 0; index < count; index++) await fn();
    samples.set(name, []);
  }
  for (let round = 0; round < rounds; round++) {
    for (const [name, fn] of Object.entries(cases)) {
      const stats = await measure(fn, {
        min_cpu_time: roundMs * 1e6,
        min_samples: minSamples,
        batch_samples: 64,
        warmup_samples: 0,
      });
      const list = samples.get(name) as number[];
      for (const value of stats.samples) list.push(value / scale);
      onSample?.(name, round, stats.p50 / scale);
    }
  }
  return Object.fromEntries(samples);
}

/** Median, min and max of plain values. */
export function summarize(values: number[], unit: Figure["unit"]): Figure {
  if (values.length === 0) throw new RangeError("summarize needs at least one value");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, samples: values.length, unit };
}

/** A figure divided by a constant (e.g. per loop → per step). */
export function scaled(figure: Figure, divisor: number): Figure {
  return { ...figure, median: figure.median / divisor, min: figure.min / divisor, max: figure.max / divisor };
}

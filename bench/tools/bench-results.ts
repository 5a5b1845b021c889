/**
 * What one `npm run bench` measured, as `results/latest.json` stores it:
 * shared by the runner that writes it and the reports rendered from it.
 */
import type { ClientBenchResult } from '../client.bench.ts';
import type { CompilerBenchResult } from '../compiler.bench.ts';
import type { HttpBenchResult } from '../http/http.bench.ts';
import type { WorkersBenchResult } from '../http/workers.bench.ts';
import type { IsolationBenchResult } from '../isolation/isolation.bench.ts';
import type { ScalingBenchResult } from '../scaling.bench.ts';
import type { TablesBenchResult } from '../tables.bench.ts';

/** The suites of `npm run bench`, in the order they run. */
export const SUITES = ['compiler', 'tables', 'http', 'scaling', 'client', 'workers', 'isolation'] as const;
export type SuiteName = (typeof SUITES)[number];

/** Everything one `npm run bench` measured; a suite left out by `--only` is absent. */
export interface BenchResults {
  generatedAt: string;
  quick: boolean;
  environment: { node: string; platform: string; arch: string; cpu: string; cores: number; loadAverage: number[]; memoryMonitor?: string };
  durationS: number;
  /**
   * Suites whose figures come from an earlier run (`--merge` kept them):
   * the date of the run that measured each. Absent when every suite was
   * measured in this run.
   */
  keptFrom?: Partial<Record<SuiteName, string>>;
  compiler?: CompilerBenchResult;
  tables?: TablesBenchResult;
  http?: HttpBenchResult;
  scaling?: ScalingBenchResult;
  client?: ClientBenchResult;
  workers?: WorkersBenchResult;
  isolation?: IsolationBenchResult;
}

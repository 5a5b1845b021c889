/**
 * The isolation benchmark's short form, for the CI guard (guard.ts): one
 * service on PGlite, tenant B's validations at the benchmark's fixed rate,
 * idle and then while tenant A runs one stored-test run on the rule that is
 * quadratic in an 11,000-item array (8 tests: a few seconds of CPU). Returns
 * B's p99 during the run as a ratio to its idle p99, its worst request,
 * and the 5xx and uncounted answers of both tenants; guard.ts judges them.
 */
import { serverErrors, summariseAnswers } from './isolation-verdict.ts';
import { measurePhase, newTenantKeys, noisyActivity, startIsolationService } from './isolation.bench.ts';
import { FULL_SIZES, setUpNoisyTenant, type NoisySizes } from './noisy-tenant.ts';

export interface IsolationCheckFigures {
  idleP99Ms: number;
  p99Ms: number;
  /** `p99Ms / idleP99Ms`. */
  ratio: number;
  worstMs: number;
  /** B's answers during the run. */
  requests: number;
  /** 5xx answers of either tenant, idle and during the run. */
  serverErrors: number;
  /** 2xx answers without RateLimit headers, of either tenant. */
  uncounted: number;
  /** A's stored-test run: its status and seconds. */
  noisy: string;
}

export interface IsolationCheckOptions {
  /** Default 3 s. */
  idleMs?: number;
  /** Default 8 tests of 11,000 items. */
  sizes?: Pick<NoisySizes, 'quadraticItems' | 'quadraticTests'>;
}

/**
 * @example
 * const { ratio, worstMs } = await runIsolationCheck();
 */
export async function runIsolationCheck(options: IsolationCheckOptions = {}): Promise<IsolationCheckFigures> {
  const service = await startIsolationService({ keys: newTenantKeys(), publishQuiet: true });
  try {
    const sizes: NoisySizes = { ...FULL_SIZES, quadraticTests: 8, ...options.sizes };
    const tenant = await setUpNoisyTenant(service.noisy, sizes, async () => {}, () => {}, ['quadratic']);
    const idle = await measurePhase(service, { idleMs: options.idleMs ?? 3000 });
    const during = await measurePhase(service, () => noisyActivity(tenant, ['quadratic'], 0));
    if (during.quiet.error !== undefined) throw new Error(`tenant B's load failed: ${during.quiet.error}`);
    const noisy = summariseAnswers(during.answers);
    return {
      idleP99Ms: idle.quiet.p99Ms,
      p99Ms: during.quiet.p99Ms,
      ratio: during.quiet.p99Ms / idle.quiet.p99Ms,
      worstMs: during.quiet.maxMs,
      requests: during.quiet.requests,
      serverErrors: serverErrors(idle.quiet.statuses) + serverErrors(during.quiet.statuses) + noisy.reduce((sum, op) => sum + serverErrors(op.statuses), 0),
      uncounted: idle.quiet.uncounted + during.quiet.uncounted + noisy.reduce((sum, op) => sum + op.uncounted, 0),
      noisy: during.answers.map((a) => `${a.status} in ${(a.ms / 1000).toFixed(1)} s`).join(', '),
    };
  } finally {
    await service.stop();
  }
}

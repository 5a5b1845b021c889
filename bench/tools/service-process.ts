/**
 * The real service in a child process for the HTTP benchmarks, run as
 * `npm start` runs it (the bundle of src/build, built once per benchmark
 * process): embedded PGlite in a temp RULES_DATA_DIR (or the given
 * PostgreSQL database), one bootstrapped tenant with a fresh admin key,
 * logs at `warn`, and limits opened up so that neither the rate limiter
 * nor the body limit answers for the service under load.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUNDLE_NODE_FLAGS, bundleService } from '../../src/build/bundle-service.ts';
import { startChildServer, type ChildServer } from './child-server.ts';

let bundled: Promise<string> | undefined;

/** The service's bundle, built on first use (a benchmark measures what `npm start` runs). */
function serviceEntry(): Promise<string> {
  bundled ??= bundleService().then(({ entry }) => entry);
  return bundled;
}

/** Body limit for the benchmark service: a 1000-item batch of ~1 KB payloads is over the 1 MiB default. */
export const BENCH_MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface ServiceOptions {
  /** PostgreSQL; unset means PGlite in a temp folder. */
  databaseUrl?: string;
  workers?: number;
  /** Extra environment, wins over the defaults here. */
  env?: Record<string, string>;
  nodeFlags?: string[];
  /** A command that runs node (see ChildServerOptions.wrapper). */
  wrapper?: string[];
  /** Give up when the service is not ready by then (default 60 s). */
  startTimeoutMs?: number;
  /** Reuse a tenant and key (a restart on the same database). */
  tenantId?: string;
  adminKey?: string;
}

export interface ServiceProcess extends ChildServer {
  readonly tenantId: string;
  readonly adminKey: string;
  /** A validator-role key of the same tenant, made at start. */
  readonly validatorKey: string;
  /** Headers of a validation request (JSON, the validator key). */
  readonly headers: Record<string, string>;
}

/**
 * Starts the service and waits until it is ready; `stop()` also removes
 * the temp folder.
 *
 * @example
 * const service = await startService();
 * await fetch(`${service.baseUrl}/api/v1/validation/validate`, { method: 'POST', headers: service.headers, body });
 * await service.stop();
 */
export async function startService(options: ServiceOptions = {}): Promise<ServiceProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rules-bench-'));
  const tenantId = options.tenantId ?? 'bench';
  const adminKey = options.adminKey ?? `bench_${randomBytes(24).toString('base64url')}`;
  let child: ChildServer;
  try {
    child = await startChildServer({
      name: `service${options.workers === undefined ? '' : ` (WORKERS=${options.workers})`}`,
      entry: await serviceEntry(),
      readyPath: '/health/ready',
      nodeFlags: [...BUNDLE_NODE_FLAGS, ...(options.nodeFlags ?? [])],
      wrapper: options.wrapper,
      startTimeoutMs: options.startTimeoutMs,
      env: {
        RULES_DATA_DIR: dataDir,
        ...(options.databaseUrl === undefined ? {} : { DATABASE_URL: options.databaseUrl }),
        ...(options.workers === undefined ? {} : { WORKERS: String(options.workers) }),
        RULES_BOOTSTRAP_TENANTS: `${tenantId}:${adminKey}`,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_MAX: '1000000000',
        MAX_BODY_BYTES: String(BENCH_MAX_BODY_BYTES),
        ...options.env,
      },
    });
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const stop = async (graceMs?: number): Promise<void> => {
    await child.stop(graceMs);
    await rm(dataDir, { recursive: true, force: true });
  };
  let validatorKey: string;
  try {
    validatorKey = await createValidatorKey(child.baseUrl, tenantId, adminKey);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ...child,
    childProcessCount: () => child.childProcessCount(),
    tenantId,
    adminKey,
    validatorKey,
    headers: { 'content-type': 'application/json', 'x-api-key': validatorKey, 'x-tenant-id': tenantId },
    stop,
  };
}

/**
 * A validator-role key, made through the API: validation load is sent with
 * one, as the service's callers would, so the measured path includes the
 * role check a validator key takes.
 */
export async function createValidatorKey(baseUrl: string, tenantId: string, adminKey: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': adminKey, 'x-tenant-id': tenantId },
    body: JSON.stringify({ name: 'bench-validator', role: 'validator' }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`creating the benchmark's validator key answered ${response.status}: ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { key: string }).key;
}

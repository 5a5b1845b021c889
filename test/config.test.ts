import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig, type IntegerVariable } from '../src/config.ts';

describe('loadConfig', () => {
  it('gives the documented defaults with an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: './data',
      redisUrl: undefined,
      bootstrapTenants: undefined,
      rateLimitMax: 6000,
      rateLimitWindowMs: 60000,
      maxBodyBytes: 1048576,
      maxBatchItems: 1000,
      maxTransactionContexts: 20,
      maxPayloadDepth: 64,
      maxExpressionLength: 4096,
      maxTableRows: 10_000,
      maxRulesPerContext: 5000,
      maxAnswerBytes: 16_777_216,
      workers: 1,
      warmStartMs: 15_000,
      requestTimeoutMs: 30_000,
      shutdownDrainMs: 0,
      shutdownTimeoutMs: 10000,
      maxEventLoopDelayMs: 200,
      metricsTenantLabels: false,
      logLevel: 'info',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '  ', LOG_LEVEL: '' }).port).toBe(3000);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/rules',
      RULES_DATA_DIR: '/var/lib/rules',
      REDIS_URL: 'redis://127.0.0.1:6379',
      RULES_BOOTSTRAP_TENANTS: 'acme:abcdefghijklmnopqrstuv,globex:ABCDEFGHIJKLMNOPQRSTUV_-1',
      RATE_LIMIT_MAX: '10',
      RATE_LIMIT_WINDOW_MS: '1000',
      MAX_BODY_BYTES: '2048',
      MAX_BATCH_ITEMS: '5',
      MAX_TRANSACTION_CONTEXTS: '3',
      MAX_PAYLOAD_DEPTH: '10',
      MAX_EXPRESSION_LENGTH: '100',
      MAX_RULES_PER_CONTEXT: '7',
      VALIDATOR_CACHE_SIZE: '50',
      VALIDATOR_CACHE_MB: '64',
      MAX_ANSWER_BYTES: '1048576',
      WORKERS: '2',
      WARM_START_MS: '0',
      REQUEST_TIMEOUT_MS: '5000',
      SHUTDOWN_TIMEOUT_MS: '500',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      METRICS_TENANT_LABELS: 'true',
      LOG_LEVEL: 'warn',
    });
    expect(config.bootstrapTenants).toEqual([
      { tenantId: 'acme', adminKey: 'abcdefghijklmnopqrstuv' },
      { tenantId: 'globex', adminKey: 'ABCDEFGHIJKLMNOPQRSTUV_-1' },
    ]);
    expect(config).toMatchObject({
      port: 8080, workers: 2, maxBatchItems: 5, validatorCacheSize: 50, validatorCacheMb: 64, maxAnswerBytes: 1_048_576, warmStartMs: 0, requestTimeoutMs: 5000, maxEventLoopDelayMs: 0, metricsTenantLabels: true, logLevel: 'warn',
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ RATE_LIMIT_MAX: '-1' }, 'RATE_LIMIT_MAX'],
    [{ MAX_BATCH_ITEMS: '0' }, 'MAX_BATCH_ITEMS'],
    [{ VALIDATOR_CACHE_MB: '0' }, 'VALIDATOR_CACHE_MB'],
    [{ VALIDATOR_CACHE_MB: '1.5' }, 'VALIDATOR_CACHE_MB'],
    [{ MAX_ANSWER_BYTES: '65535' }, 'MAX_ANSWER_BYTES'],
    [{ MAX_ANSWER_BYTES: '268435457' }, 'MAX_ANSWER_BYTES'],
    [{ REQUEST_TIMEOUT_MS: '99' }, 'REQUEST_TIMEOUT_MS'],
    [{ WARM_START_MS: 'soon' }, 'WARM_START_MS'],
    [{ WARM_START_MS: '600001' }, 'WARM_START_MS'],
    [{ MAX_EVENT_LOOP_DELAY_MS: '60001' }, 'MAX_EVENT_LOOP_DELAY_MS'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ METRICS_TENANT_LABELS: 'maybe' }, 'METRICS_TENANT_LABELS'],
    [{ WORKERS: '2' }, 'WORKERS'],
    [{ RULES_BOOTSTRAP_TENANTS: 'acme:short' }, 'RULES_BOOTSTRAP_TENANTS'],
    [{ RULES_BOOTSTRAP_TENANTS: 'Acme:abcdefghijklmnopqrstuv' }, 'RULES_BOOTSTRAP_TENANTS'],
    [{ RULES_BOOTSTRAP_TENANTS: 'acme' }, 'RULES_BOOTSTRAP_TENANTS'],
    [{ RULES_BOOTSTRAP_TENANTS: 'acme:abcdefghijklmnopqrstu!' }, 'RULES_BOOTSTRAP_TENANTS'],
    [{ RULES_BOOTSTRAP_TENANTS: 'acme:abcdefghijklmnopqrstuv,globex:abcdefghijklmnopqrstuv' }, 'RULES_BOOTSTRAP_TENANTS'],
  ])('refuses %j naming %s', (env, variable) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as Error).message).toContain(variable);
  });
});

describe('CONFIG_VARIABLES', () => {
  const names = CONFIG_VARIABLES.map((variable) => variable.name);
  const integers = CONFIG_VARIABLES.filter((variable): variable is IntegerVariable => variable.kind === 'integer');
  // WORKERS above 1 needs a database URL; with one, every variable's bounds can be tried alone.
  const base = { DATABASE_URL: 'postgres://u@db:5432/rules' };

  it('names each variable once, in upper case, with a meaning', () => {
    expect(new Set(names).size).toBe(names.length);
    for (const variable of CONFIG_VARIABLES) {
      expect(variable.name).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(variable.meaning.trim(), variable.name).not.toBe('');
    }
  });

  it('is every variable loadConfig reads, and loadConfig reads every one', () => {
    const read = new Set<string>();
    const env = new Proxy({}, {
      get: (_target, name) => {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
    });
    loadConfig(env);
    expect([...read].sort()).toEqual([...names].sort());
  });

  it.each(CONFIG_VARIABLES.filter((variable) => variable.default !== undefined).map((variable) => [variable.name, variable]))(
    '%s: its default is what an empty environment gives',
    (name, variable) => {
      expect(loadConfig({ [name]: String(variable.default) })).toEqual(loadConfig({}));
    },
  );

  it.each(integers.map((variable) => [variable.name, variable]))('%s: its bounds are the ones applied', (name, variable) => {
    expect(() => loadConfig({ ...base, [name]: String(variable.min) })).not.toThrow();
    if (variable.min > 0) expect(() => loadConfig({ ...base, [name]: String(variable.min - 1) })).toThrow(name);
    const max = variable.max;
    if (max !== undefined) {
      expect(() => loadConfig({ ...base, [name]: String(max) })).not.toThrow();
      expect(() => loadConfig({ ...base, [name]: String(max + 1) })).toThrow(name);
    }
    expect(variable.default).toBeGreaterThanOrEqual(variable.min);
    if (variable.max !== undefined) expect(variable.default).toBeLessThanOrEqual(variable.max);
  });
});

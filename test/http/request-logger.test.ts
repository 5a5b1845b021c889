/**
 * The deferred per-request logger (src/http/request-logger.ts) on Fastify's
 * real pino logger: nothing is built for a request that does not log, and a
 * request that logs writes the same line a pino child would have.
 */
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { deferredChildLogger } from '../../src/http/request-logger.ts';

function capturedLogger(level: string): { log: FastifyBaseLogger; lines: Record<string, unknown>[]; childCalls: () => number } {
  const lines: Record<string, unknown>[] = [];
  const app = Fastify({ logger: { level, stream: { write: (line: string) => lines.push(JSON.parse(line)) } } });
  const real = app.log;
  let calls = 0;
  // The parent as Fastify hands it over, counting the children made from it.
  const log = Object.create(real, {
    child: { value: (bindings: Record<string, unknown>, options?: object) => { calls++; return real.child(bindings, options); } },
  }) as FastifyBaseLogger;
  return { log, lines, childCalls: () => calls };
}

describe('deferred request logger', () => {
  it('makes no pino child for a request that does not log', () => {
    const { log, lines, childCalls } = capturedLogger('info');
    const requestLog = deferredChildLogger(log, { requestId: 'r-1' }, {});
    expect(requestLog.level).toBe('info');
    expect(childCalls()).toBe(0);
    expect(lines).toEqual([]);
  });

  it('writes lines with the request bindings once it logs, making the child once', () => {
    const { log, lines, childCalls } = capturedLogger('info');
    const requestLog = deferredChildLogger(log, { requestId: 'r-2' }, {});
    requestLog.warn({ attempt: 2 }, 'database unavailable');
    requestLog.error('unexpected error');
    requestLog.debug('below the level');
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, requestId: 'r-2', attempt: 2, msg: 'database unavailable' }),
      expect.objectContaining({ level: 50, requestId: 'r-2', msg: 'unexpected error' }),
    ]);
    expect(childCalls()).toBe(1);
  });

  it('keeps a route log level and passes bindings on to grandchildren', () => {
    const { log, lines } = capturedLogger('warn');
    const requestLog = deferredChildLogger(log, { requestId: 'r-3' }, { level: 'debug' });
    expect(requestLog.level).toBe('debug');
    requestLog.debug('route-level debug');
    requestLog.child({ step: 'publish' }).info('nested');
    expect(lines).toEqual([
      expect.objectContaining({ level: 20, requestId: 'r-3', msg: 'route-level debug' }),
      expect.objectContaining({ level: 30, requestId: 'r-3', step: 'publish', msg: 'nested' }),
    ]);
  });

  it('changes the level of its own lines when the level is set', () => {
    const { log, lines } = capturedLogger('info');
    const requestLog = deferredChildLogger(log, { requestId: 'r-4' }, {});
    requestLog.level = 'error';
    requestLog.warn('now below the level');
    requestLog.error('still written');
    expect(lines.map((line) => line.msg)).toEqual(['still written']);
    expect(log.level).toBe('info');
  });
});

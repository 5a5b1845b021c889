/**
 * The cluster primary's logger: the primary runs no Fastify app, so it
 * writes pino-compatible JSON lines itself (same fields and level numbers
 * as the workers' logs, so one log pipeline reads both).
 */
import { hostname } from 'node:os';
import type { LogLevel } from '../config.ts';

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;

/** The slice of a pino logger the primary uses. */
export interface PrimaryLogger {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
  error(o: object, msg?: string): void;
}

/**
 * A logger writing to `write` (stdout by default) at `level` and above.
 *
 * @example
 * createPrimaryLogger('info').info({ workers: 4 }, 'starting workers');
 */
export function createPrimaryLogger(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): PrimaryLogger {
  const threshold = LEVELS[level];
  const base = { pid: process.pid, hostname: hostname(), role: 'primary' };
  const log = (name: 'info' | 'warn' | 'error') => (o: object, msg?: string): void => {
    if (LEVELS[name] < threshold) return;
    const fields: Record<string, unknown> = { ...o };
    if (fields.err instanceof Error) fields.err = { type: fields.err.name, message: fields.err.message };
    write(`${JSON.stringify({ level: LEVELS[name], time: Date.now(), ...base, ...fields, ...(msg === undefined ? {} : { msg }) })}\n`);
  };
  return { info: log('info'), warn: log('warn'), error: log('error') };
}

/**
 * Node's process metrics (CPU, memory, event-loop lag, GC, handles) belong
 * to the process, not to one app: they are collected once, into a registry
 * of their own, however many apps the process builds (tests build many).
 * prom-client's default collectors install observers that cannot be
 * removed, so a registry per app would leak one set per app.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

let processRegistry: Registry | undefined;

/**
 * The process-wide registry of default metrics, created on first use.
 *
 * @example
 * const text = await processMetrics().metrics();
 */
export function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

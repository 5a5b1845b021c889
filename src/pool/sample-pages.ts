/**
 * The main thread's side of an impact task's page requests
 * (tasks/impact-task.ts): each request is read from the database and
 * answered with the samples as the replay needs them (id, time, payload),
 * the payloads as their stored JSON text: the thread parses them, so a
 * page of megabytes is neither parsed here nor copied as an object graph.
 * A read that fails is answered as failed, and its error kept, so the
 * route answers what the database said (503 when it is down), not what the
 * thread made of it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { SampleCursor, SampleText } from '../storage/types.ts';
import type { SamplePageAnswer, SamplePageRequest } from './tasks/impact-task.ts';

/** The error of the read that failed, if one did. */
export interface SamplePageServer {
  readonly failure: unknown;
}

/**
 * Answers page requests arriving on `port` with `read`, until the port closes.
 *
 * @example
 * const server = serveSamplePages(port, (count, before) => storage.samples.newestTextsBefore(tenantId, context, count, before, maxBytes));
 */
export function serveSamplePages(port: MessagePort, read: (count: number, before?: SampleCursor) => Promise<SampleText[]>): SamplePageServer {
  const server = { failure: undefined as unknown };
  port.on('message', (request: SamplePageRequest) => {
    read(request.count, request.before).then(
      (page) => answer(port, { ok: true, page }),
      (error: unknown) => {
        server.failure ??= error;
        answer(port, { ok: false });
      },
    );
  });
  return server;
}

function answer(port: MessagePort, page: SamplePageAnswer): void {
  // The task may have ended (stopped at its budget) while the page was read: nobody is listening then.
  try {
    port.postMessage(page);
  } catch {
    // The port is closed.
  }
}

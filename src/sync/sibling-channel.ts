/**
 * The link between the worker processes of one instance (WORKERS > 1).
 * A worker that changed something tells its siblings through it and waits,
 * within a bound, until they have applied the change: docs/api.md wants
 * the new version live in every process of the instance before the call
 * returns. Implemented over node:cluster IPC in src/cluster.
 */
import type { ChangeNotice } from './change-notice.ts';

export interface SiblingChannel {
  /**
   * Tells every sibling. Resolves once all of them applied the notice, or
   * when the wait bound passed (a dead or stuck sibling must not hang a
   * publish). Never rejects.
   */
  broadcast(notice: ChangeNotice): Promise<void>;
  /** Handles notices from siblings; the handler's promise settling is the acknowledgement. */
  onNotice(handler: (notice: ChangeNotice) => Promise<void>): void;
  /** Stops handling notices; pending broadcasts resolve at once. */
  close(): void;
}

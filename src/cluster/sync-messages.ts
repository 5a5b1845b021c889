/**
 * The IPC messages by which the workers of one instance keep each other's
 * caches in step, relayed by the primary:
 *
 *   worker A → primary: broadcast {id, notice}
 *   primary → every other ready worker: apply {id, notice}
 *   each of them → primary: applied {id}   (after CacheSync.apply settled)
 *   primary → worker A: done {id}          (all applied, or the wait bound passed)
 *
 * A worker says `ready` once it handles notices; workers still starting have
 * nothing cached and are not waited for.
 */
import type { ChangeNotice } from '../sync/change-notice.ts';

export const SYNC_MESSAGE_TYPE = 'rules-sync';

export type SyncMessage =
  | { type: typeof SYNC_MESSAGE_TYPE; op: 'ready' }
  | { type: typeof SYNC_MESSAGE_TYPE; op: 'broadcast'; id: number; notice: ChangeNotice }
  | { type: typeof SYNC_MESSAGE_TYPE; op: 'apply'; id: string; notice: ChangeNotice }
  | { type: typeof SYNC_MESSAGE_TYPE; op: 'applied'; id: string }
  | { type: typeof SYNC_MESSAGE_TYPE; op: 'done'; id: number };

/** True for the messages above (other IPC traffic is left alone). */
export function isSyncMessage(message: unknown): message is SyncMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === SYNC_MESSAGE_TYPE;
}

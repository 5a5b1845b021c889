/**
 * The worker's end of the sibling link (SiblingChannel over node:cluster
 * IPC): broadcasts go to the primary, which relays them and answers once
 * every other worker applied them (src/cluster/sync-messages.ts).
 */
import type { ChangeNotice } from '../sync/change-notice.ts';
import type { SiblingChannel } from '../sync/sibling-channel.ts';
import { TUNING } from '../tuning.ts';
import { isSyncMessage, SYNC_MESSAGE_TYPE, type SyncMessage } from './sync-messages.ts';

/** The parts of `process` the channel uses (a cluster worker's IPC). */
export interface IpcProcess {
  send?(message: SyncMessage, callback: (error: Error | null) => void): boolean;
  readonly connected?: boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

export interface WorkerChannelOptions {
  ipc?: IpcProcess;
  /** The primary waits TUNING.siblingWaitMs; this side waits a little longer in case the primary is gone. */
  waitMs?: number;
}

export class WorkerChannel implements SiblingChannel {
  readonly #ipc: IpcProcess;
  readonly #waitMs: number;
  readonly #waiting = new Map<number, () => void>();
  #handler: ((notice: ChangeNotice) => Promise<void>) | undefined;
  #nextId = 0;
  #closed = false;

  constructor(options: WorkerChannelOptions = {}) {
    this.#ipc = options.ipc ?? process;
    this.#waitMs = options.waitMs ?? TUNING.siblingWaitMs.value + TUNING.workerSiblingMarginMs.value;
    this.#ipc.on('message', this.#onMessage);
  }

  broadcast(notice: ChangeNotice): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(finish, this.#waitMs);
      this.#waiting.set(id, finish);
      if (!this.#send({ type: SYNC_MESSAGE_TYPE, op: 'broadcast', id, notice }, finish)) finish();
    });
  }

  onNotice(handler: (notice: ChangeNotice) => Promise<void>): void {
    this.#handler = handler;
    this.#send({ type: SYNC_MESSAGE_TYPE, op: 'ready' });
  }

  close(): void {
    this.#closed = true;
    this.#handler = undefined;
    this.#ipc.off('message', this.#onMessage);
    for (const finish of [...this.#waiting.values()]) finish();
  }

  readonly #onMessage = (message: unknown): void => {
    if (!isSyncMessage(message)) return;
    if (message.op === 'done') {
      this.#waiting.get(message.id)?.();
    } else if (message.op === 'apply') {
      const handler = this.#handler;
      const applied = handler === undefined ? Promise.resolve() : handler(message.notice).catch(() => {});
      void applied.then(() => this.#send({ type: SYNC_MESSAGE_TYPE, op: 'applied', id: message.id }));
    }
  };

  /** False when the message could not go out (no IPC channel, or it closed). */
  #send(message: SyncMessage, onError?: () => void): boolean {
    if (this.#ipc.send === undefined || this.#ipc.connected === false) return false;
    try {
      this.#ipc.send(message, (error) => {
        if (error !== null && error !== undefined) onError?.();
      });
      return true;
    } catch {
      return false;
    }
  }
}

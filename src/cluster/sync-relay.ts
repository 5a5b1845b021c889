/**
 * SyncRelay: the primary's part of keeping workers in step. It forwards a
 * worker's change notice to every other ready worker and tells the sender
 * once all of them applied it, or once TUNING.siblingWaitMs passed, whichever
 * comes first: a dead or stuck worker delays a publish by at most that
 * bound, never forever. A worker that exits stops being waited for.
 */
import type { PrimaryLogger } from './primary-logger.ts';
import { TUNING } from '../tuning.ts';
import { isSyncMessage, SYNC_MESSAGE_TYPE, type SyncMessage } from './sync-messages.ts';

/** A worker as the relay sees it (node:cluster's Worker fits). */
export interface RelayPeer {
  readonly id: number;
  send(message: SyncMessage, callback?: (error: Error | null) => void): boolean;
  isConnected(): boolean;
}

interface PendingBroadcast {
  origin: RelayPeer;
  originId: number;
  waitingFor: Set<number>;
  timer: NodeJS.Timeout;
}

export class SyncRelay {
  readonly #log: PrimaryLogger;
  readonly #waitMs: number;
  readonly #ready = new Map<number, RelayPeer>();
  readonly #pending = new Map<string, PendingBroadcast>();
  #sequence = 0;

  constructor(options: { log: PrimaryLogger; waitMs?: number }) {
    this.#log = options.log;
    this.#waitMs = options.waitMs ?? TUNING.siblingWaitMs.value;
  }

  /** Handles an IPC message from a worker; ignores anything else. */
  handle(peer: RelayPeer, message: unknown): void {
    if (!isSyncMessage(message)) return;
    switch (message.op) {
      case 'ready':
        this.#ready.set(peer.id, peer);
        break;
      case 'broadcast':
        this.#broadcast(peer, message.id, message);
        break;
      case 'applied': {
        const pending = this.#pending.get(message.id);
        if (pending === undefined) break;
        pending.waitingFor.delete(peer.id);
        if (pending.waitingFor.size === 0) this.#finish(message.id);
        break;
      }
      default:
        break;
    }
  }

  /** A worker exited: nobody waits for it any more. */
  forget(peerId: number): void {
    this.#ready.delete(peerId);
    for (const [relayId, pending] of this.#pending) {
      if (pending.waitingFor.delete(peerId) && pending.waitingFor.size === 0) this.#finish(relayId);
    }
  }

  #broadcast(origin: RelayPeer, originId: number, message: Extract<SyncMessage, { op: 'broadcast' }>): void {
    const targets = [...this.#ready.values()].filter((peer) => peer.id !== origin.id && peer.isConnected());
    if (targets.length === 0) {
      send(origin, { type: SYNC_MESSAGE_TYPE, op: 'done', id: originId });
      return;
    }
    const relayId = String(++this.#sequence);
    const timer = setTimeout(() => {
      const pending = this.#pending.get(relayId);
      this.#log.warn(
        { workers: [...(pending?.waitingFor ?? [])], notice: message.notice, waitMs: this.#waitMs },
        'sibling workers did not confirm a change in time; answering anyway',
      );
      this.#finish(relayId);
    }, this.#waitMs);
    const pending: PendingBroadcast = { origin, originId, waitingFor: new Set(targets.map((peer) => peer.id)), timer };
    this.#pending.set(relayId, pending);
    for (const peer of targets) {
      if (!send(peer, { type: SYNC_MESSAGE_TYPE, op: 'apply', id: relayId, notice: message.notice })) {
        pending.waitingFor.delete(peer.id);
      }
    }
    if (pending.waitingFor.size === 0) this.#finish(relayId);
  }

  #finish(relayId: string): void {
    const pending = this.#pending.get(relayId);
    if (pending === undefined) return;
    this.#pending.delete(relayId);
    clearTimeout(pending.timer);
    send(pending.origin, { type: SYNC_MESSAGE_TYPE, op: 'done', id: pending.originId });
  }
}

/** False when the peer is gone; IPC errors are not the relay's to crash on. */
function send(peer: RelayPeer, message: SyncMessage): boolean {
  if (!peer.isConnected()) return false;
  try {
    peer.send(message, () => {});
    return true;
  } catch {
    return false;
  }
}

/**
 * Requests handed back to Fastify after their body was read.
 *
 * The validation fast lane (src/validation/fast-lane.ts) reads a
 * request's body before it knows whether it can answer it. Whenever it
 * cannot (a body the route would refuse, a spent budget, a refusal of the
 * validation itself, ...), it hands the request to Fastify, which answers
 * it exactly as if the fast lane did not exist: the route's preParsing hook
 * gives Fastify the bytes already read in place of the drained request
 * stream, the timing hook keeps the clock that started when the request
 * arrived, and when the fast lane already ran the validation, the route
 * answers with its outcome instead of running it again. So the fast lane
 * never writes an error of its own.
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { preParsingHookHandler } from 'fastify';
import { accountedForByFastLane } from './route-hooks.ts';

interface Replay {
  readonly body: Buffer;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  /** The route's outcome when the fast lane already ran it: returns its answer or throws its refusal. */
  readonly outcome: (() => unknown) | undefined;
}

// Keyed by the Node request, so nothing is added to the objects Node and
// Fastify create per request; entries go with their requests.
const replays = new WeakMap<IncomingMessage, Replay>();

/**
 * Marks `request` as handed back, with the body read from it, its arrival
 * time and, when the route's work was already done, its outcome.
 */
export function markReplay(request: IncomingMessage, body: Buffer, startedAt: number, outcome?: () => unknown): void {
  replays.set(request, { body, startedAt, outcome });
}

/** The outcome the fast lane handed over with `request`, else undefined (the route then does its own work). */
export function replayedOutcome(request: IncomingMessage): (() => unknown) | undefined {
  return replays.get(request)?.outcome;
}

/** When a handed-back request arrived, else undefined. */
export function replayStartOf(request: IncomingMessage): number | undefined {
  return replays.get(request)?.startedAt;
}

/**
 * The preParsing hook of routes the fast lane may hand requests back to:
 * the body already read, as the stream Fastify's body parser reads.
 */
export const replayBufferedBody: preParsingHookHandler = accountedForByFastLane((request, _reply, payload, done) => {
  const replay = replays.get(request.raw);
  done(null, replay === undefined ? payload : Readable.from([replay.body], { objectMode: false }));
});

/**
 * One management call of the noisy tenant, timed and classified as the
 * isolation targets need it: its status (0 when no answer came), how long
 * it took, how many bytes it answered, the problem's `code` on an error,
 * and whether the answer carried the RateLimit headers (a 2xx without them
 * passed uncounted).
 *
 * The answer is read as a stream and only counted, never held: a stored-test
 * run with explain answered 183 MB before the service bounded it, and
 * parsing that here would stall this process, which also times the quiet
 * tenant's requests. Only a small answer is parsed, for its summary.
 */
import { performance } from 'node:perf_hooks';
import { HEADER_LIMIT } from '../../src/rate-limit/register-rate-limit.ts';

/** What one call got. */
export interface ManagementAnswer {
  operation: string;
  /** HTTP status; 0 when no answer came within the client's timeout (or the connection failed). */
  status: number;
  ms: number;
  bytes: number;
  /** The problem's `code` of a 4xx or 5xx; undefined when its body was not problem+json with a code. */
  code?: string;
  /** The answer carried RateLimit headers (the request was counted against the tenant's budget). */
  counted: boolean;
  /** Seconds to wait before the next attempt (a 429's or 503's Retry-After). */
  retryAfterS?: number;
  /** A few words on the answer: a 2xx's summary, an error's detail, why there was no answer. */
  note: string;
}

/** Answers up to this size are parsed for their summary; larger ones are only counted. */
const PARSED_ANSWER_BYTES = 4 * 1024 * 1024;

export interface CallTarget {
  baseUrl: string;
  tenantId: string;
  adminKey: string;
}

export interface CallOptions {
  /** `operation` in the answer: how the report names it. */
  operation: string;
  method: string;
  path: string;
  /** A JSON text, sent as it is (bodies of megabytes are stringified once, not per call). */
  body?: string;
  contentType?: string;
  /** Give up after this long; the answer then has status 0. */
  timeoutMs: number;
  /** A 2xx answer's parsed body in a few words (absent or unparsed: its size). */
  summary?: (json: any) => string;
}

/**
 * Sends one call and classifies the answer; never throws.
 *
 * @example
 * const answer = await managementCall(tenantA, { operation: 'publish', method: 'POST', path: '/api/v1/contexts/c/publish', timeoutMs: 60_000 });
 * if (answer.status >= 500) console.log(answer.note);
 */
export async function managementCall(target: CallTarget, options: CallOptions): Promise<ManagementAnswer> {
  const headers: Record<string, string> = { 'x-api-key': target.adminKey, 'x-tenant-id': target.tenantId };
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const started = performance.now();
  const base = { operation: options.operation, bytes: 0, counted: false };
  try {
    const response = await fetch(target.baseUrl + options.path, {
      method: options.method, headers, body: options.body, signal: AbortSignal.timeout(options.timeoutMs),
    });
    const parts: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response.body ?? []) {
      bytes += chunk.byteLength;
      if (bytes <= PARSED_ANSWER_BYTES) parts.push(Buffer.from(chunk));
    }
    const ms = performance.now() - started;
    const text = bytes <= PARSED_ANSWER_BYTES ? Buffer.concat(parts).toString('utf8') : undefined;
    const retryAfter = Number(response.headers.get('retry-after'));
    const answer: ManagementAnswer = {
      ...base, status: response.status, ms, bytes, counted: response.headers.has(HEADER_LIMIT),
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterS: retryAfter } : {}),
      note: '',
    };
    const json = parsed(text);
    if (response.status >= 400) {
      if (typeof json?.code === 'string') answer.code = json.code;
      answer.note = String(json?.detail ?? text?.slice(0, 200) ?? '').slice(0, 300);
    } else {
      answer.note = json !== undefined && options.summary !== undefined ? options.summary(json) : `${bytes} bytes`;
    }
    return answer;
  } catch (error) {
    const ms = performance.now() - started;
    const timedOut = (error as Error).name === 'TimeoutError';
    return { ...base, status: 0, ms, note: timedOut ? `no answer within ${options.timeoutMs / 1000} s` : `no answer: ${(error as Error).message}` };
  }
}

function parsed(text: string | undefined): any {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

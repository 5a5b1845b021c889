/**
 * Assertions shared by the HTTP tests of the management API: a response of
 * the expected status (its body in the failure message), or a problem+json
 * error with the expected status and code.
 */
import { expect } from 'vitest';

export type Json = Record<string, any>;
export type Response = { status: number; headers: Headers; body: any };

/** Awaits a response, asserts its status and returns its body. */
export async function ok(response: Promise<Response>, status = 200): Promise<any> {
  const resolved = await response;
  expect(resolved.status, JSON.stringify(resolved.body)).toBe(status);
  return resolved.body;
}

/** Awaits a response, asserts it is the problem `code` with `status`, and returns the problem body. */
export async function expectProblem(response: Promise<Response>, status: number, code: string): Promise<Json> {
  const resolved = await response;
  expect(resolved.status, JSON.stringify(resolved.body)).toBe(status);
  expect(resolved.body.code).toBe(code);
  return resolved.body;
}

/**
 * Request ids: unique within a process and across processes (each source
 * stands for one), shaped like a UUID, and what a problem body carries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestIdSource } from '../../src/http/request-id.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('request ids', () => {
  it('never repeats, within one source or across sources', () => {
    const sources = Array.from({ length: 20 }, () => createRequestIdSource());
    const seen = new Set<string>();
    for (const next of sources) {
      for (let i = 0; i < 1_000; i++) {
        const id = next();
        expect(id).toMatch(UUID);
        seen.add(id);
      }
    }
    expect(seen.size).toBe(20_000);
  });

  it('differs on every response and is UUID-shaped', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const response = await t.request('GET', '/api/v1/no-such-route');
      expect(response.status).toBe(404);
      expect(response.body.requestId).toMatch(UUID);
      ids.add(response.body.requestId);
    }
    expect(ids.size).toBe(5);
  });
});

/**
 * The latency step's floor server (bench/tools/floor-server.ts), started as
 * the benchmark starts it: it must answer what the bare route answers,
 * whatever the body, request after request on one keep-alive connection
 * (the load generator's), and never parse: a body that is not JSON gets
 * the same answer.
 */
import { request as httpRequest, Agent } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startChildServer } from '../../bench/tools/child-server.ts';
import { FIXED_ANSWER } from '../../bench/tools/fixed-answer.ts';

const entry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/tools/floor-server.ts');

interface Answer { status: number; type: string | undefined; text: string; reusedSocket: boolean }

function post(baseUrl: string, agent: Agent, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}/api/v1/validation/validate`, {
      method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, type: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8'), reusedSocket: req.reusedSocket,
      }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('floor server', () => {
  it('answers the bare route\'s fixed passing result to any body, on a kept-alive connection', async () => {
    const server = await startChildServer({ name: 'floor server', entry, env: {} });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const answers = [
        await post(server.baseUrl, agent, JSON.stringify({ context: 'loan-application', payload: { amount: 5 } })),
        await post(server.baseUrl, agent, 'not even JSON: the floor server parses nothing'),
      ];
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.type).toBe('application/json; charset=utf-8');
        expect(JSON.parse(answer.text)).toEqual(FIXED_ANSWER);
      }
      // The second request went over the first one's connection, as the load generator's do.
      expect(answers.map((answer) => answer.reusedSocket)).toEqual([false, true]);
    } finally {
      agent.destroy();
      await server.stop();
    }
  }, 30_000);
});

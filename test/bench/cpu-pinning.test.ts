/**
 * The benchmark pins only to cpus this process may use: the affinity list
 * taskset prints is read as cpus, not searched as text (a list like
 * `10-11` holds neither cpu 0 nor cpu 1, though its text holds both digits).
 */
import { describe, expect, it } from 'vitest';
import { cpusOf } from '../../bench/tools/cpu-pinning.ts';

describe('cpusOf', () => {
  it.each([
    { list: '0,1', cpus: [0, 1] },
    { list: '0-3', cpus: [0, 1, 2, 3] },
    { list: '0-2,8,10-11', cpus: [0, 1, 2, 8, 10, 11] },
    { list: '5', cpus: [5] },
  ])('reads $list', ({ list, cpus }) => {
    expect([...cpusOf(list)]).toEqual(cpus);
  });

  it('does not take 10-11 for cpus 0 and 1', () => {
    const cpus = cpusOf('10-11');
    expect(cpus.has(0)).toBe(false);
    expect(cpus.has(1)).toBe(false);
  });
});

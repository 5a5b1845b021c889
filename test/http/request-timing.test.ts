/**
 * The Server-Timing value is written by integer arithmetic (no toFixed on
 * the hot path); it must read exactly as the duration rounded to the
 * microsecond, with three decimals.
 */
import { describe, expect, it } from 'vitest';
import { serverTiming } from '../../src/http/request-timing.ts';

describe('serverTiming', () => {
  it('writes milliseconds with three decimals', () => {
    expect(serverTiming(0)).toBe('total;dur=0.000');
    expect(serverTiming(0.05)).toBe('total;dur=0.050');
    expect(serverTiming(0.0004)).toBe('total;dur=0.000');
    expect(serverTiming(1.2345678)).toBe('total;dur=1.235');
    expect(serverTiming(12.0004)).toBe('total;dur=12.000');
    expect(serverTiming(999.9996)).toBe('total;dur=1000.000');
    expect(serverTiming(30_000.007)).toBe('total;dur=30000.007');
  });

  it('agrees with the duration rounded to the microsecond over a range of values', () => {
    for (let i = 0; i < 20_000; i++) {
      const durationMs = i < 10_000 ? i * 0.000731 : Math.random() * 60_000;
      const expected = `total;dur=${(Math.round(durationMs * 1000) / 1000).toFixed(3)}`;
      expect(serverTiming(durationMs)).toBe(expected);
    }
  });
});

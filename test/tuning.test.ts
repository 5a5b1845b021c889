/**
 * The fixed tunables (src/tuning.ts): every entry says its unit and why,
 * and its value is within the bounds it declares, so an edit that breaks
 * what another part of the service relies on fails here first.
 */
import { describe, expect, it } from 'vitest';
import { TUNING, type Tunable } from '../src/tuning.ts';

const entries = Object.entries(TUNING) as Array<[string, Tunable]>;

describe('TUNING', () => {
  it.each(entries)('%s: a finite value within its bounds, a unit and a reason', (_name, entry) => {
    expect(Number.isFinite(entry.value)).toBe(true);
    if (entry.min !== undefined) expect(entry.value).toBeGreaterThanOrEqual(entry.min);
    if (entry.max !== undefined) expect(entry.value).toBeLessThanOrEqual(entry.max);
    expect(entry.unit.trim()).not.toBe('');
    expect(entry.why.trim()).not.toBe('');
  });

  it('names times with their unit', () => {
    for (const [name, entry] of entries) {
      if (entry.unit === 'ms') expect(name, name).toMatch(/Ms$/);
      if (entry.unit === 's') expect(name, name).toMatch(/Seconds$/);
    }
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(TUNING)).toBe(true);
    for (const [name, entry] of entries) expect(Object.isFrozen(entry), name).toBe(true);
  });

  it('keeps the default page within the largest', () => {
    expect(TUNING.defaultPageSize.value).toBeLessThanOrEqual(TUNING.maxPageSize.value);
  });
});

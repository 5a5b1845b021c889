/**
 * Date arithmetic of the rule language (product.md 3.4) written plainly,
 * shared by the hand-written baseline and the peer engines' extensions so
 * every engine pays the same for dates.
 */

const DAY_MS = 86_400_000;
const ISO_DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

/** Epoch milliseconds of an ISO-8601 date or date-time (UTC when no offset). */
export function parseDate(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO_DATE_RE.exec(value);
  if (m === null) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) + Math.floor(Number(m[7] ?? 0) * 1000);
  const check = new Date(ms);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  const zone = m[8];
  if (zone === undefined || zone === 'Z' || zone === 'z') return ms;
  const offset = (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  return zone[0] === '+' ? ms - offset : ms + offset;
}

/** Whole years from `dob` to `now`, comparing UTC calendar dates. */
export function ageAt(dob: unknown, now: number): number | undefined {
  const born = parseDate(dob);
  if (born === undefined) return undefined;
  const b = new Date(born);
  const n = new Date(now);
  const beforeBirthday = n.getUTCMonth() < b.getUTCMonth()
    || (n.getUTCMonth() === b.getUTCMonth() && n.getUTCDate() < b.getUTCDate());
  return n.getUTCFullYear() - b.getUTCFullYear() - (beforeBirthday ? 1 : 0);
}

/** Whole UTC calendar days from `from` to `to`, signed. */
export function daysBetween(from: unknown, to: unknown): number | undefined {
  const a = parseDate(from);
  const b = parseDate(to);
  if (a === undefined || b === undefined) return undefined;
  return Math.floor(b / DAY_MS) - Math.floor(a / DAY_MS);
}

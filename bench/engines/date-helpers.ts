/**
 * Date arithmetic of the rule language (docs/rule-language.md) written plainly,
 * shared by the hand-written baseline and the peer engines' extensions so
 * every engine pays the same for dates.
 */

const DAY_MS = 86_400_000;
const ISO_DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Epoch milliseconds of an ISO-8601 date or date-time (UTC when no offset). */
export function parseDate(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO_DATE_RE.exec(value);
  if (m === null) return undefined;
  const year = +m[1];
  const month = +m[2];
  const day = +m[3];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const hour = m[4] === undefined ? 0 : +m[4];
  const minute = m[5] === undefined ? 0 : +m[5];
  const second = m[6] === undefined ? 0 : +m[6];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) + (m[7] === undefined ? 0 : Math.floor(+m[7] * 1000));
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

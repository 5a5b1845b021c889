/**
 * What an audit entry keeps of a changed resource's before or after value
 * (docs/api.md, "Audit trail"): its JSON text when that is at most
 * TUNING.auditMaxValueBytes long, else a small stand-in that identifies it
 * without holding it, so one entry stays small whatever the change (a
 * context's stored tests may be megabytes of payloads, and may hold
 * personal data that must not outlive DELETE /tenant/samples in the trail).
 */
import { createHash } from 'node:crypto';
import { TUNING } from '../tuning.ts';

/** The stored form of a value too large to keep. */
export interface ElidedAuditValue {
  elided: true;
  /** Length of the value's JSON text (as the API shows the resource), in UTF-8 bytes. */
  bytes: number;
  /** SHA-256 of that JSON text, lowercase hex. */
  sha256: string;
  /** The most an entry keeps of one value, in bytes. */
  limit: number;
}

/**
 * The JSON text to store for `value`: itself, or its ElidedAuditValue.
 *
 * @example
 * auditValueText({ tests: hugeList }); // '{"elided":true,"bytes":338012,"sha256":"9f86…","limit":16384}'
 */
export function auditValueText(value: unknown, limit: number = TUNING.auditMaxValueBytes.value): string {
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= limit) return text;
  const elided: ElidedAuditValue = { elided: true, bytes, sha256: createHash('sha256').update(text, 'utf8').digest('hex'), limit };
  return JSON.stringify(elided);
}

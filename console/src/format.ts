/** How the console writes times: the reader's locale and time zone, to the second. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/**
 * A rule's status as the console shows it: a published rule edited since
 * is `draft` to the API, yet its published version is still live, so both
 * are said.
 *
 * @example
 * ruleStatusText({ status: 'draft', publishedVersion: 1 }); // 'published · draft pending'
 */
export function ruleStatusText(rule: { status: string; publishedVersion?: number | null }): string {
  return rule.status === 'draft' && rule.publishedVersion != null ? 'published · draft pending' : rule.status;
}

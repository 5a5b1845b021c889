/** What the example's scripts (setup.ts, server.ts) share on their command lines. */
import { pathToFileURL } from 'node:url';

/** Where the service is and which tenant and context the form uses: by default, `npm start`'s demo tenant. */
export const SERVICE_OPTIONS = {
  service: { type: 'string', default: 'http://127.0.0.1:3000' },
  tenant: { type: 'string', default: 'demo' },
  context: { type: 'string', default: 'orders' },
} as const;

/** Whether the module of this URL was started as a script (and not imported, as the test does). */
export function startedAsScript(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && moduleUrl === pathToFileURL(process.argv[1]).href;
}

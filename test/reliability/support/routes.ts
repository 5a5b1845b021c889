/**
 * Every route a built app serves, read from `printRoutes()` so that suites
 * iterating over routes notice routes added later.
 */
import type { FastifyInstance } from 'fastify';

export interface RouteEntry {
  method: string;
  /** With Fastify's parameters, e.g. `/api/v1/rules/:id`. */
  url: string;
}

/**
 * Parses Fastify's route tree, e.g.
 * `├── /api/v1/rules (POST, GET, HEAD)` / `│   └── /:id (GET, HEAD)`.
 *
 * @example
 * listRoutes(app).filter((r) => r.url.startsWith('/api/v1'));
 */
export function listRoutes(app: FastifyInstance): RouteEntry[] {
  const tree = app.printRoutes({ commonPrefix: false });
  const prefixes: string[] = [];
  const routes: RouteEntry[] = [];
  for (const line of tree.split('\n')) {
    const branch = line.search(/[├└]── /);
    if (branch < 0) continue;
    const depth = branch / 4;
    const rest = line.slice(branch + 4);
    const match = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(rest);
    if (match === null) continue;
    const url = (depth === 0 ? '' : prefixes[depth - 1]) + match[1];
    prefixes[depth] = url;
    prefixes.length = depth + 1;
    for (const method of (match[2] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) {
      routes.push({ method, url });
    }
  }
  return routes;
}

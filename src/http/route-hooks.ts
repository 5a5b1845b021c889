/**
 * Which hooks run for one route, and whether a path that answers that
 * route's requests without Fastify (the validation fast lane) accounts for
 * every one of them.
 *
 * A hook does something to each request it runs for: a header, a check, a
 * metric. The fast lane answers single validations from the HTTP server's
 * request event, where no hook runs, so it reproduces the effect of each hook
 * it knows (calling the same functions). A hook it does not know would
 * silently not run for the requests it answers; so every hook the fast lane
 * reproduces is marked where it is added (`accountedForByFastLane`), and at
 * ready time `watchRouteHooks` names the first unmarked hook of the route,
 * if any, and the fast lane stays off.
 *
 * The hooks of a route are read from Fastify's own records: the
 * encapsulating instance's hooks (Fastify's `kHooks` symbol, found by its
 * description) and the route options' hooks, which are what Fastify joins
 * into the route's hook lists when it gets ready.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

/** The hooks Fastify runs per request (its `lifecycleHooks`); application hooks (onRoute, onReady, onClose...) run no code per request. */
const REQUEST_HOOKS = [
  'onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort',
] as const;

type HookName = (typeof REQUEST_HOOKS)[number];

const accounted = new WeakSet<object>();

/**
 * Marks a hook whose effect on a single validation the validation fast
 * lane reproduces (or which does nothing for such a request); returns it
 * unchanged. Say at the call where the fast lane does it.
 *
 * @example
 * app.addHook('onRequest', accountedForByFastLane(startClock));
 */
export function accountedForByFastLane<T extends object>(hook: T): T {
  accounted.add(hook);
  return hook;
}

/** Reads, at ready time, what a watched route's hooks are. */
export interface RouteHookWatch {
  /**
   * A description of the first hook of the route that is not marked with
   * accountedForByFastLane ("onRequest hook (name) not accounted for"), "the route was
   * never added", or undefined when every hook is accounted for. Call it
   * once the app is ready: hooks can be added until then.
   */
  unaccountedHook(): string | undefined;
}

/**
 * Watches the route `method url` (the full URL, prefix included) as it is
 * added. Call it on the root instance before the route is registered.
 *
 * @example
 * const watch = watchRouteHooks(app, 'POST', '/api/v1/validation/validate');
 * await app.ready();
 * const reason = watch.unaccountedHook();
 */
export function watchRouteHooks(app: FastifyInstance, method: string, url: string): RouteHookWatch {
  let found: { instance: FastifyInstance; route: RouteOptions } | undefined;
  app.addHook('onRoute', function onRoute(this: FastifyInstance, route) {
    if (route.url === url && route.method === method) found = { instance: this, route };
  });
  return {
    unaccountedHook() {
      if (found === undefined) return 'the route was never added';
      const instanceHooks = hooksOf(found.instance);
      for (const name of REQUEST_HOOKS) {
        const own = (found.route as Partial<Record<HookName, unknown>>)[name];
        const hooks = [...(instanceHooks?.[name] ?? []), ...(own === undefined ? [] : Array.isArray(own) ? own as unknown[] : [own])];
        for (const hook of hooks) {
          if (typeof hook !== 'function' || !accounted.has(hook)) {
            const label = typeof hook === 'function' && hook.name !== '' ? ` (${hook.name})` : '';
            return `${name} hook${label} not accounted for`;
          }
        }
      }
      if (instanceHooks === undefined) return 'the app\'s hooks could not be read';
      return undefined;
    },
  };
}

/** The instance's lifecycle hook lists (Fastify's `kHooks`), looked up the prototype chain of encapsulated instances. */
function hooksOf(instance: FastifyInstance): Partial<Record<HookName, unknown[]>> | undefined {
  for (let object: object | null = instance; object !== null; object = Object.getPrototypeOf(object) as object | null) {
    const symbol = Object.getOwnPropertySymbols(object).find((s) => s.description === 'fastify.hooks');
    if (symbol !== undefined) return (object as Record<symbol, Partial<Record<HookName, unknown[]>>>)[symbol];
  }
  return undefined;
}

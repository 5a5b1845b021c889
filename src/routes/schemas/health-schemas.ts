/**
 * The body of the health routes, a shared schema (`$id`, registered by
 * shared-schemas.ts) and so a component of the OpenAPI document.
 */
export const healthStatusSchema = {
  $id: 'HealthStatus',
  type: 'object',
  description: 'The process is up (live) or ready to serve (ready).',
  required: ['status'],
  properties: { status: { type: 'string', description: '`ok` for liveness, `ready` for readiness.', examples: ['ready'] } },
} as const;

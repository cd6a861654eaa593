/**
 * The route manifest: which paths each route group answers, read by the CDK stack (API Gateway
 * resources, one Lambda per group from `functions/<group>/handler.ts`) and by local mode (one
 * server routing by the same prefixes), so the two cannot route differently.
 */
export interface RouteGroupSpec {
  /** The group's construct id in the CDK stack (kept stable: it names the deployed resources). */
  readonly constructId: string;
  /** Paths the group answers, with everything below them. */
  readonly paths: readonly string[];
  /** API Gateway checks the API key (usage plans) before the app on these paths. */
  readonly apiKeyRequired: boolean;
  /** Paths (and everything below them) where the app authenticates the caller itself (e.g. `Authorization: Bearer`). */
  readonly appAuthenticatedPaths?: readonly string[];
  /** Response streaming: the handler is `streamHandle(app)`. */
  readonly streaming?: boolean;
}

export const ROUTE_GROUPS = {
  agents: {
    constructId: 'Agents',
    paths: ['/v1/agents', '/v1/usage', '/v1/traces', '/v1/end-users', '/v1/oauth-providers'],
    apiKeyRequired: true,
    // OpenAI clients send the key as `Authorization: Bearer`, which API Gateway's key check does
    // not read: the app authenticates and rate-limits that route itself. A2A clients send either,
    // and read agent cards without one.
    // The OAuth callback carries no key: the provider sends the end user's browser back with a state that names the tenant.
    appAuthenticatedPaths: ['/v1/chat/completions', '/v1/models', '/v1/responses', '/a2a', '/v1/oauth/callback'],
    streaming: true,
  },
  // Evaluation datasets and runs: the agents area's rate limits, their own function.
  evals: { constructId: 'Evals', paths: ['/v1/eval-datasets', '/v1/eval-runs'], apiKeyRequired: true },
  'knowledge-sources': { constructId: 'KnowledgeSources', paths: ['/v1/knowledge-sources'], apiKeyRequired: true },
  // Streams execution events (server-sent events) with response streaming. Inbound hooks carry no
  // key (their token or signature is checked by the app).
  workflows: { constructId: 'Workflows', paths: ['/v1/workflows', '/v1/executions'], apiKeyRequired: true, appAuthenticatedPaths: ['/v1/hooks'], streaming: true },
  'api-docs': { constructId: 'Docs', paths: ['/v1/docs', '/v1/openapi.json'], apiKeyRequired: false },
  // Token-authenticated in the app.
  platform: { constructId: 'Platform', paths: ['/platform'], apiKeyRequired: false },
  // MCP clients send the key as `X-API-Key` or `Authorization: Bearer`: the app authenticates and
  // rate-limits (the agents area's limits) itself.
  mcp: { constructId: 'Mcp', paths: ['/mcp'], apiKeyRequired: false },
} as const satisfies Record<string, RouteGroupSpec>;

export type RouteGroupName = keyof typeof ROUTE_GROUPS;

/** The group that answers a path, as API Gateway routes it (undefined: no group does). */
export function routeGroupOf(path: string): RouteGroupName | undefined {
  for (const [name, spec] of Object.entries(ROUTE_GROUPS) as Array<[RouteGroupName, RouteGroupSpec]>) {
    if (spec.paths.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return name;
    if (spec.appAuthenticatedPaths?.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return name;
  }
  return undefined;
}

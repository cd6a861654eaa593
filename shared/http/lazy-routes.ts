import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './context';
import { errorHandler, notFoundResponse } from './error-handler';
import { matchedRoute } from './matched-route';
import { onFirstUse } from '../load-once';
import { openApiApp } from './openapi-app';

/** Registers a section's routes on the app given (as `app.openapi(...)` calls do). */
export type RegisterRoutes<R> = (routes: OpenAPIHono<AppEnv>, rt: R) => void;

interface Section {
  /** Its paths as patterns (a path and everything below it), each with its length: the longest that matches wins. */
  paths: Array<{ pattern: RegExp; length: number }>;
  build: () => Promise<OpenAPIHono<AppEnv>>;
}

const PARENT = Symbol('the group app’s context');
const sectionsOf = new WeakMap<OpenAPIHono<AppEnv>, Section[]>();

/** `/v1/workflows/:workflowId/hooks` → matches that path and everything below it. */
function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}(?:/|$)`);
}

/** The section whose longest path matches, if any. */
function sectionFor(sections: Section[], path: string): Section | undefined {
  let best: { section: Section; length: number } | undefined;
  for (const section of sections) {
    for (const { pattern, length } of section.paths) if (length > (best?.length ?? -1) && pattern.test(path)) best = { section, length };
  }
  return best?.section;
}

/**
 * The section's routes see what the group's middleware found (identity, request id, error style)
 * and the body it read; the group's logs, metrics and span name the route the section matched.
 */
const adoptParent: MiddlewareHandler<AppEnv> = async (c, next) => {
  const parent = (c.env as Record<symbol, Context<AppEnv>>)[PARENT]!;
  for (const [key, value] of Object.entries(parent.var)) c.set(key as keyof AppEnv['Variables'], value as never);
  c.req.bodyCache = parent.req.bodyCache;
  try {
    await next();
  } finally {
    const route = matchedRoute(c);
    if (route) parent.set('route', route);
  }
};

/** Sends a request to the section for its path, past the group's middleware; others go on to the group's own routes. */
function dispatch(sections: Section[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const section = sectionFor(sections, c.req.path);
    if (!section) return next();
    const routes = await section.build();
    const res = await routes.fetch(c.req.raw, { ...(c.env as object), [PARENT]: c });
    // The headers the group's middleware set before the route (rate limits…) go onto the
    // section's response, as Hono's own `c.res =` would put them; content-type is the route's.
    for (const [name, value] of c.res.headers) if (name !== 'content-type') res.headers.set(name, value);
    // Cleared first, `c.res = res` takes the response as it is. Set over the group's own, Hono
    // would rebuild it from `res.body`: on the Node server that turns the adapter's light response
    // (a string body, sent in one write) into a web stream (with request-context.ts's header set
    // after the route, which did the same, 15% of a GET's CPU).
    c.res = undefined;
    c.res = res;
  };
}

/**
 * A section of a group's routes, built when a request first reaches it: its modules are loaded
 * with `import()` (a file of their own in the bundle, which a cold start neither reads nor
 * compiles) and its schemas made then, so a function's start costs only its middleware and a
 * request only its own section. A request to `paths` (or below; `:name` matches one segment; the
 * section with the longest matching path takes it) passes the group's middleware as any other,
 * then goes to the section's own app, which sees the same context values and body. A load that
 * fails is tried again by the next request; PRELOAD=true builds every section at start.
 */
export function lazyRoutes<R>(app: OpenAPIHono<AppEnv>, rt: R, paths: readonly string[], load: () => Promise<RegisterRoutes<R>>): void {
  const build = onFirstUse(async () => {
    const register = await load();
    const routes = openApiApp();
    routes.use('*', adoptParent);
    routes.onError(errorHandler);
    routes.notFound(notFoundResponse);
    register(routes, rt);
    return routes;
  });
  let sections = sectionsOf.get(app);
  if (!sections) {
    sectionsOf.set(app, (sections = []));
    app.all('*', dispatch(sections));
  }
  sections.push({ paths: paths.map((path) => ({ pattern: pathPattern(path), length: path.length })), build });
}

/** The apps that serve a group's routes: the group's own, then each section's (built now if not yet). */
async function routeApps(app: OpenAPIHono<AppEnv>): Promise<Array<OpenAPIHono<AppEnv>>> {
  return [app, ...(await Promise.all((sectionsOf.get(app) ?? []).map((section) => section.build())))];
}

type OpenApiDocument = ReturnType<OpenAPIHono<AppEnv>['getOpenAPI31Document']>;

/**
 * The group's OpenAPI 3.1 document, every section's routes included (each is built for it): one
 * generator over all their definitions, as over one app's.
 */
export async function routesDocument(group: OpenAPIHono<AppEnv>, info: OpenApiDocument['info']): Promise<OpenApiDocument> {
  const definitions = (await routeApps(group)).flatMap((app) => app.openAPIRegistry.definitions);
  return new OpenApiGeneratorV31(definitions).generateDocument({ openapi: '3.1.0', info });
}

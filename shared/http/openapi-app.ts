import { OpenAPIHono } from '@hono/zod-openapi';
import type { z } from 'zod';
import { parseInput } from '../validation';
import type { AppEnv } from './context';

type Target = 'json' | 'query' | 'param' | 'header' | 'cookie' | 'form';
type RouteRequest = { body?: { content?: Record<string, { schema?: unknown }>; required?: boolean } } & Partial<Record<'query' | 'params' | 'headers' | 'cookies', unknown>>;

const REQUEST_PART: Record<Exclude<Target, 'json' | 'form'>, 'query' | 'params' | 'headers' | 'cookies'> = {
  query: 'query',
  param: 'params',
  header: 'headers',
  cookie: 'cookies',
};

function schemaOf(request: RouteRequest | undefined, target: Target): z.ZodType | undefined {
  if (!request) return undefined;
  if (target === 'json' || target === 'form') {
    const content = request.body?.content ?? {};
    const entry = Object.entries(content).find(([type]) => (target === 'json' ? /json/i.test(type) : /form/i.test(type)));
    return entry?.[1].schema as z.ZodType | undefined;
  }
  return request[REQUEST_PART[target]] as z.ZodType | undefined;
}

/**
 * An OpenAPIHono whose request validation fails as the API's 400 naming the field, in the API's
 * words: the validator's own parse has no message map, so a failed part is parsed again with it.
 * A route whose JSON body is optional gets `{}` parsed by its schema (defaults applied) when a
 * request sends no content type: the validator skips such a request and hands the handler a bare
 * `{}`, without the defaults the handler counts on.
 */
export function openApiApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  const register = app.openapi.bind(app);
  app.openapi = ((route, handler, hook) => {
    const request = route.request as RouteRequest | undefined;
    const optionalJson = request?.body && request.body.required !== true ? schemaOf(request, 'json') : undefined;
    const withBody: typeof handler = optionalJson
      ? (c, next) => {
          if (c.req.header('content-type') === undefined) c.req.addValidatedData('json', parseInput(optionalJson, {}) as object);
          return handler(c, next);
        }
      : handler;
    return register(
      route,
      withBody,
      hook ??
        ((result) => {
          if (result.success) return undefined;
          // The validator hands the hook the raw input too (its typings leave it out of failures).
          const { target } = result;
          const { data } = result as { data?: unknown };
          const schema = schemaOf(route.request as RouteRequest | undefined, target);
          if (schema) parseInput(schema, data);
          throw new Error(`request ${target} failed validation without a schema to name the field`);
        }),
    );
  });
  return app;
}

import { createServer } from 'node:http';
import { afterAll, beforeAll } from 'vitest';

/**
 * A local HTTP service that answers every request with the same JSON (a shop's order status, say),
 * started before the file's tests and closed after them. Reached by the name localhost, which the
 * tests' outbound policy allows.
 */
export function fixedJsonServer(body: unknown): { readonly url: string } {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
  const state = { url: '' };
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    state.url = `http://localhost:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}
